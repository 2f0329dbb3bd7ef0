import Foundation
import Testing

@testable import Imago

@Suite("Each component's configuration: the defaults pass validate(), a value that cannot work is named")
struct ConfigurationValidationTests {
    @Test("the pipeline, its HTTP loader and the disk cache")
    func components() throws {
        try ImagePipeline.Configuration(trimsMemoryOnPressure: false).validate()
        try HTTPDataLoader.Configuration().validate()
        try DiskCache.Configuration().validate()

        let refused: [(() throws(ConfigurationError) -> Void, String)] = [
            (
                { () throws(ConfigurationError) in
                    try ImagePipeline.Configuration(maximumConcurrentDecodes: 0, trimsMemoryOnPressure: false).validate()
                },
                "concurrent decodes 0: expected 1 or more"
            ),
            (
                { () throws(ConfigurationError) in
                    try ImagePipeline.Configuration(retryPolicy: RetryPolicy(maximumAttempts: 0), trimsMemoryOnPressure: false).validate()
                }, "retry attempts 0: expected 1 or more"
            ),
            (
                { () throws(ConfigurationError) in
                    let loader = HTTPDataLoader(configuration: .init(readTimeout: .zero))
                    defer { Task { try? await loader.shutdown() } }
                    try ImagePipeline.Configuration(dataLoader: loader, trimsMemoryOnPressure: false).validate()
                }, "read timeout 0.0 seconds: expected more than 0"
            ),
            (
                { () throws(ConfigurationError) in try HTTPDataLoader.Configuration(maximumConnectionsPerHost: 0).validate() },
                "connections per host 0: expected 1 or more"
            ),
            (
                { () throws(ConfigurationError) in try DiskCache.Configuration(sizeLimit: 0).validate() },
                "disk cache size limit 0 bytes: expected 1 or more"
            ),
            (
                { () throws(ConfigurationError) in try DiskCache.Configuration(maintenanceInterval: .zero).validate() },
                "disk cache maintenance interval 0.0 seconds: expected more than 0"
            ),
        ]
        for (validate, message) in refused {
            let error = #expect(throws: ConfigurationError.self, "\(message)") { try validate() }
            #expect(error?.description == message)
        }
    }
}
