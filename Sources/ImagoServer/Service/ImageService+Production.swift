import Foundation
import Imago

extension ImageService {
    /// What a miss makes of its source: a value that the image, thumbor
    /// and info routes hand to ``result(for:source:forwarding:report:production:)``,
    /// so that a request reads top to bottom down to ``make(_:from:of:ticket:)``.
    /// A URL's ``ProcessingPlan`` is made from it on a miss only.
    enum Production: Sendable {
        /// An imgproxy URL's answer, in the negotiated format.
        case imgproxy(ProcessingOptions, format: OutputFormat)
        /// A thumbor URL's answer.
        case thumbor(ThumborProcessor)
        /// A thumbor `/meta` URL's JSON.
        case thumborMeta(ThumborProcessor, imageURL: String)
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
        case .imgproxy(let options, let format): return try await execute(options.plan(format: format), on: response, of: url, ticket: ticket)
        case .thumbor(let processor): return try await execute(try processor.plan(), on: response, of: url, ticket: ticket)
        case .thumborMeta(let processor, let imageURL):
            let overlays = try await self.overlays(for: .thumbor(processor))
            try await ticket.transform()
            defer { metrics.transformed() }
            let meta = ThumborMetaEncoder(processor: processor.drawing(overlays), imageURL: imageURL)
            return (try await render(response.data, as: ImageRequest(url: url), encodedWith: meta).0, "application/json")
        case .info:
            try await ticket.transform()
            return (try await describe(response.data, of: url), "application/json")
        }
    }

    /// `plan` carried out on the source: passed through as it came where
    /// the plan says so, else its overlays fetched, then, in a
    /// transformation turn, decoded, laid out and encoded.
    func execute(_ plan: ProcessingPlan, on response: DataResponse, of url: URL, ticket: AdmissionControl.Ticket) async throws(ServiceError)
        -> (Data, mediaType: String)
    {
        if let passed = try await passedThrough(response, of: url, plan: plan, ticket: ticket) { return passed }
        let overlays = try await overlays(for: plan.layout)
        try await ticket.transform()
        defer { metrics.transformed() }
        return try await transform(response.data, of: url, plan: plan, overlays: overlays)
    }

    /// The images a layout draws, by the name it knows them by: the
    /// operator's watermark for imgproxy's `wm` (under ""), the images of
    /// thumbor's `watermark()` filters (under their URLs as written).
    func overlays(for layout: ProcessingPlan.Layout) async throws(ServiceError) -> [String: Image] {
        switch layout {
        case .imgproxy(let options):
            guard options.watermark.isEnabled else { return [:] }
            guard let watermark else { throw ServiceError(.badRequest, "bad option \"wm\": this server has no watermark image") }
            return ["": try await watermark.image(using: pipeline, policy: configuration.sourcePolicy)]
        case .thumbor(let processor):
            guard let dialect = configuration.thumbor else { return [:] }
            return try await thumborWatermarks(processor.filters, dialect: dialect)
        }
    }
}
