import Foundation
import Imago

extension ImageService {
    /// What a miss makes of its source: a value that the image, thumbor
    /// and info routes hand to ``result(for:source:forwarding:report:production:)``,
    /// so that a request reads top to bottom down to ``make(_:from:of:ticket:)``.
    enum Production: Sendable {
        /// An imgproxy URL's answer, in the negotiated format.
        case image(ProcessingOptions, format: OutputFormat)
        /// A thumbor URL's answer, or its `/meta` JSON.
        case thumbor(ThumborPath, filters: [ThumborFilter], dialect: ThumborDialect, settings: ThumborAnswerSettings)
        /// `/info`'s JSON.
        case info
    }

    /// The answer `production` makes of `response`, the source at `url`,
    /// once the admission's download turn has come: each kind waits for its
    /// transformation turn itself, after what it may do without one.
    func make(_ production: Production, from response: DataResponse, of url: URL, ticket: AdmissionControl.Ticket) async throws(ServiceError)
        -> (Data, mediaType: String)
    {
        switch production {
        case .image(let options, let format):
            if let passed = try await passedThrough(response, of: url, options: options, format: format, ticket: ticket) { return passed }
            try await ticket.transform()
            defer { metrics.transformed() }
            return try await transform(response.data, of: url, options: options, format: format)
        case .thumbor(let path, let filters, let dialect, let settings):
            let watermarks = try await thumborWatermarks(filters, dialect: dialect)
            let processor = ThumborProcessor(path: path, filters: filters, watermarks: watermarks)
            try await ticket.transform()
            defer { metrics.transformed() }
            if path.isMeta {
                let meta = ThumborMetaEncoder(processor: processor, imageURL: Self.thumborImageURL(path.image))
                return (try await render(response.data, as: ImageRequest(url: url), encodedWith: meta).0, "application/json")
            }
            return try await transform(response.data, of: url, thumbor: processor, settings: settings)
        case .info:
            try await ticket.transform()
            return (try await describe(response.data, of: url), "application/json")
        }
    }
}
