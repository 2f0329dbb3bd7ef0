import Foundation

/// S3 or an S3-compatible store for `s3://bucket/key` sources: where the
/// objects are, and how requests are addressed and signed.
public struct ObjectStorage: Sendable, Equatable {
    /// The endpoint (`http://127.0.0.1:9000`); nil for AWS's, `https://s3.REGION.amazonaws.com`.
    public var endpoint: URL?
    /// `ENDPOINT/BUCKET/KEY` rather than `BUCKET.ENDPOINT/KEY`.
    public var usesPathStyle: Bool
    public var region: String
    public var credentials: AWSCredentials?

    /// Settings from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN` and `AWS_REGION` (else `AWS_DEFAULT_REGION`,
    /// else us-east-1).
    public static func fromEnvironment(_ environment: [String: String], endpoint: URL?, usesPathStyle: Bool) -> ObjectStorage {
        let credentials = environment["AWS_ACCESS_KEY_ID"].flatMap { key in
            environment["AWS_SECRET_ACCESS_KEY"].map { secret in
                AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"])
            }
        }
        let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        return ObjectStorage(endpoint: endpoint, usesPathStyle: usesPathStyle, region: region, credentials: credentials)
    }

    public init(endpoint: URL? = nil, usesPathStyle: Bool = false, region: String = "us-east-1", credentials: AWSCredentials? = nil) {
        self.endpoint = endpoint
        self.usesPathStyle = usesPathStyle
        self.region = region
        self.credentials = credentials
    }
}
