// A Swift server app of its own that also serves signed, cached,
// SSRF-guarded thumbnails, without running `imago serve` beside it: the
// image service's routes are mounted on the app's router at /images.
//
//     IMAGO_KEY=… IMAGO_SALT=… swift run ImageHost --port 8080 --cache /var/cache/image-host
//
// Options: --port N (0 for any free port), --cache FOLDER, --allow-network
// CIDR (repeatable: a range opened although loopback or private, e.g. a
// source on this machine). The first line printed is the address it listens on.
import Foundation
import Hummingbird
import ImagoServer

let arguments = Array(CommandLine.arguments.dropFirst())
func values(of option: String) -> [String] {
    arguments.indices.filter { arguments[$0] == option && $0 + 1 < arguments.count }.map { arguments[$0 + 1] }
}

let environment = ProcessInfo.processInfo.environment
let port = values(of: "--port").last.flatMap(Int.init) ?? 8080
let cacheFolder = values(of: "--cache").last ?? NSTemporaryDirectory() + "image-host"
let networks = values(of: "--allow-network").compactMap(IPNetwork.init)
let signing = try environment["IMAGO_KEY"].map { try URLSigning(hexKeys: $0, hexSalts: environment["IMAGO_SALT"] ?? "") }

try FileManager.default.createDirectory(atPath: cacheFolder, withIntermediateDirectories: true)
let images = try ImageService(
    configuration: .init(
        signing: signing,
        sourcePolicy: SourcePolicy(allowedNetworks: networks),
        cacheFolder: cacheFolder
    ))

let router = Router()
// The app's own routes…
router.get("/") { _, _ in "An app with images at /images/{signature}/{options}/{source}\n" }
// …and the image service's, below /images.
router.addRoutes(images.routes, atPath: "/images")

// The image service runs beside the server and shuts down after it has
// drained (its caches' writes finished and index snapshots saved).
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "ImageHost"),
    services: [images],
    onServerRunning: { channel in
        print("listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)/")
        fflush(nil)
    }
)
try await app.runService()
