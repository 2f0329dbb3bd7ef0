import Foundation
import Imago
import NIOCore
import NIOHTTP1

/// Answers each request on one connection as its route says, misbehaving
/// on purpose where the route asks for it. Runs on the connection's event
/// loop; delays are scheduled on it, never slept.
final class TestServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let routes: Routes
    private var request: TestImageServer.Request?
    private var keepAlive = true

    init(routes: Routes) {
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = TestImageServer.Request(method: head.method.rawValue, uri: head.uri, headers: HTTPFields(head.headers))
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            guard let request else { return }
            self.request = nil
            let response = routes.respond(to: request)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let routes = self.routes
            let eventLoop = context.eventLoop
            let send: @Sendable () -> Void = {
                routes.sendOrHold(on: eventLoop) {
                    let (handler, context) = loopBound.value
                    handler.send(response, context: context)
                }
            }
            if response.delay > .zero {
                eventLoop.scheduleTask(in: TimeAmount(response.delay), send)
            } else {
                send()
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func send(_ response: TestImageServer.Response, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        if response.behaviour == .reset {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders(response.headers)
        switch response.behaviour {
        case .omitContentLength, .endless: break
        case .declaredLength(let length): headers.replaceOrAdd(name: "Content-Length", value: String(length))
        default: headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)

        switch response.behaviour {
        case .normal, .omitContentLength, .reset:
            writeBody(response.body, context: context)
            finish(context: context)
        case .declaredLength:
            writeBody(response.body, context: context)
            context.flush()
            context.close(promise: nil)
        case .endless:
            repeatForever(response.body.isEmpty ? Data(count: 16_384) : response.body, context: context)
        case .truncate(let count):
            writeBody(response.body.prefix(count), context: context)
            context.flush()
            context.close(promise: nil)
        case .stall(let count):
            writeBody(response.body.prefix(count), context: context)
            context.flush()
        case .drip(let chunkSize, let interval):
            drip(response.body, chunkSize: max(1, chunkSize), interval: interval, context: context)
        }
    }

    private func drip(_ rest: Data, chunkSize: Int, interval: Duration, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard !rest.isEmpty else {
            finish(context: context)
            return
        }
        writeBody(rest.prefix(chunkSize), context: context)
        context.flush()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let remaining = Data(rest.dropFirst(chunkSize))
        context.eventLoop.scheduleTask(in: TimeAmount(interval)) {
            let (handler, context) = loopBound.value
            handler.drip(remaining, chunkSize: chunkSize, interval: interval, context: context)
        }
    }

    /// Writes `chunk` again each time the last copy has gone out, so the
    /// server's memory stays flat however long the client keeps reading.
    private func repeatForever(_ chunk: Data, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let buffer = context.channel.allocator.buffer(bytes: chunk)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenSuccess {
            // Through the loop, not directly: a write that completes at once
            // would otherwise recurse until the stack runs out.
            eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.repeatForever(chunk, context: context)
            }
        }
    }

    private func writeBody(_ body: Data, context: ChannelHandlerContext) {
        guard !body.isEmpty else { return }
        let buffer = context.channel.allocator.buffer(bytes: body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    }

    private func finish(context: ChannelHandlerContext) {
        let keepAlive = self.keepAlive
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { loopBound.value.close(promise: nil) }
        }
    }
}
