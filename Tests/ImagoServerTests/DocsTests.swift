import Foundation
import ImagoSandbox
import Testing

@testable import ImagoServer

/// The README and the pages in docs/ name flags, variables, files, types and
/// functions; these tests fail when one of them does not exist.
@Suite("The docs name only what exists: imago's flags, IMAGO_ variables, repository files, types, functions and links")
struct DocsTests {
    @Test("README.md and every page in docs/ name only what the repository and imago have")
    func pagesNameWhatExists() async throws {
        // Given what the repository declares and the flags imago takes
        let checker = try await DocChecker.repository()
        // When every page is read
        var problems: [String] = []
        for page in ["README.md"] + DocChecker.pages() {
            let text = try #require(checker.contents(page), "cannot read \(page)")
            problems += checker.problems(in: text, page: page)
        }
        // Then nothing named is missing
        #expect(problems.isEmpty, "\(problems.count) names that do not exist:\n\(problems.joined(separator: "\n"))")
    }

    @Test("the checker reports a misspelt flag, variable, file, type, member, function and link, and nothing spelt right")
    func checkerReportsMistakes() {
        // Given a checker that knows a few names and files
        let files = ["docs/OPERATING.md": "# Operating\n\n## Settings\n", "scripts/test.sh": ""]
        let checker = DocChecker(
            flags: ["bind", "cache"], commands: ["serve", "fetch"], variables: ["IMAGO_BIND"], types: ["ImagePipeline"],
            members: ["Configuration", "loadImage"], functions: ["loadImage"], swiftFiles: ["Profiles.swift"],
            exists: { path in files[path] != nil || files.keys.contains { $0.hasPrefix(path + "/") } }, contents: { files[$0] })
        // When it reads a page with one mistake of each kind beside the same names spelt right
        let page = """
            Run `imago serve --bind 127.0.0.1:80 --bnd x` or set `IMAGO_BIND` (not IMAGO_BINDS); see `--cache FOLDER`, `--cahce`.
            `scripts/test.sh` runs it, `scripts/tset.sh` does not; `docs/` holds [the settings](OPERATING.md#settings),
            not [these](OPERATING.md#setings) nor [those](OPERATE.md).
            `ImagePipeline.Configuration` and `ImagePipeline.Configuraton`, `ImagePipelin`, `loadImage(_:)`, `loadImg(_:)`.
            `Profiles.swift`, `Profile.swift`.

            ```sh
            docker run --read-only imago                # another tool's flags are not imago's
            IMAGO_BIND=:80 imago fetch --cache /tmp --sise 9 URL | grep --count x
            ```
            """
        let problems = checker.problems(in: page, page: "docs/GUIDE.md")
        // Then each mistake is reported, once, and nothing else
        #expect(
            problems == [
                "docs/GUIDE.md: IMAGO_BINDS is no IMAGO_ variable imago reads",
                "docs/GUIDE.md: --bnd is no flag of imago",
                "docs/GUIDE.md: --cahce is no flag of imago",
                "docs/GUIDE.md: scripts/tset.sh does not exist",
                "docs/GUIDE.md: ImagePipeline.Configuraton: no type or member Configuraton is declared",
                "docs/GUIDE.md: ImagePipelin: no type ImagePipelin is declared",
                "docs/GUIDE.md: loadImg(_:): no function loadImg is declared",
                "docs/GUIDE.md: Profile.swift: no such file",
                "docs/GUIDE.md: link OPERATING.md#setings: no heading setings in docs/OPERATING.md",
                "docs/GUIDE.md: link OPERATE.md: docs/OPERATE.md does not exist",
                "docs/GUIDE.md: --sise is no flag of imago",
            ], "\(problems)")
    }
}

/// Reads Markdown and lists what it names that does not exist: a flag of
/// `imago` (in code that runs `imago`, or a code span that starts with
/// `--`), an `IMAGO_*` variable, a repository path in a code span or a code
/// block, a Swift file, a type (`UpperCamelCase`, with its `.member`s) or a
/// function (`name(…)`) in a code span, and a relative link or its `#heading`.
struct DocChecker {
    /// Flags without their dashes: `imago serve`'s settings and every other subcommand's options.
    let flags: Set<String>
    /// imago's subcommands: a line that runs one has its flags checked.
    let commands: Set<String>
    let variables: Set<String>
    /// Types declared in the repository (and modules), and the external ones the docs name.
    let types: Set<String>
    /// Names declared in the repository: members a `Type.member` may name.
    let members: Set<String>
    /// Functions (and enum cases, which are called alike) declared in the repository, thumbor's filters, and the external ones the docs name.
    let functions: Set<String>
    /// The names of the repository's Swift files (`Profiles.swift`).
    let swiftFiles: Set<String>
    /// Whether a repository path (a file or a folder) exists.
    let exists: (String) -> Bool
    /// A repository file's text.
    let contents: (String) -> String?

    // MARK: Reading a page

    func problems(in markdown: String, page: String) -> [String] {
        let (prose, code) = Self.split(markdown)
        let spans = Self.matches(#"`([^`]+)`"#, in: prose).map {
            $0[1].replacingOccurrences(of: #"\s*\n\s*"#, with: " ", options: .regularExpression)
        }
        var problems: [String] = []
        for variable in Self.matches(#"\bIMAGO_[A-Z0-9_]*[A-Z0-9]\b"#, in: markdown).map({ $0[0] }) where !variables.contains(variable) {
            problems.append("\(variable) is no IMAGO_ variable imago reads")
        }
        for span in spans {
            let flags = span.hasPrefix("--") ? Self.matches(#"^--([a-z][a-z0-9-]*)"#, in: span).map { $0[1] } : imagoFlags(in: span)
            problems += flags.filter { !self.flags.contains($0) }.map { "--\($0) is no flag of imago" }
            problems += missingPaths(in: span, anchored: true) + missingType(span) + missingFunction(span)
        }
        problems += missingLinks(in: prose, page: page)
        for line in code.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n") {
            problems += imagoFlags(in: String(line)).filter { !flags.contains($0) }.map { "--\($0) is no flag of imago" }
            problems += missingPaths(in: String(line), anchored: false)
        }
        var seen: Set<String> = []
        return problems.map { "\(page): \($0)" }.filter { seen.insert($0).inserted }
    }

    /// The flags given to `imago SUBCOMMAND` in a command line, up to a pipe or a comment.
    private func imagoFlags(in line: String) -> [String] {
        guard let run = Self.matches(#"(?:^|[\s/])imago\s+([a-z]+)\b"#, in: line).first(where: { commands.contains($0[1]) }),
            let start = line.range(of: run[0])
        else { return [] }
        let arguments = line[start.upperBound...].prefix { !"|;#".contains($0) }
        return Self.matches(#"(?<![\w-])--([a-z][a-z0-9-]*)"#, in: String(arguments)).map { $0[1] }
    }

    private func missingPaths(in text: String, anchored: Bool) -> [String] {
        let pattern = #"(?:Sources|scripts|deploy|docs|Benchmarks|Tests|Examples|Fuzz)/[A-Za-z0-9_./+-]*"#
        return Self.matches((anchored ? "^" : #"(?<![\w./$-])"#) + pattern, in: text).map { $0[0] }
            .filter { !exists($0.hasSuffix("/") ? String($0.dropLast()) : $0) }.map { "\($0) does not exist" }
    }

    /// `Type`, `Type.member.member` or `Type.member(…)`: each part must be declared; `Name.swift` must be a file.
    private func missingType(_ span: String) -> [String] {
        if span.hasSuffix(".swift"), !span.contains("/") { return swiftFiles.contains(span) ? [] : ["\(span): no such file"] }
        let name = span.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
        guard let parts = Self.matches(#"^([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(.*\))?$"#, in: name).first
        else { return [] }
        guard types.contains(parts[1]) else { return ["\(span): no type \(parts[1]) is declared"] }
        return parts[2].split(separator: ".").map(String.init).filter { !types.contains($0) && !members.contains($0) }
            .map { "\(span): no type or member \($0) is declared" }
    }

    /// `name(…)`, `.name(…)` or `value.name(…)` with a lowercase name: it must be declared.
    private func missingFunction(_ span: String) -> [String] {
        guard let name = Self.matches(#"^\.?(?:[A-Za-z_]\w*\.)*([a-z_]\w*)\("#, in: span).first?[1], !functions.contains(name) else { return [] }
        return ["\(span): no function \(name) is declared"]
    }

    /// Relative links: the file must exist, and a `#fragment` must be one of its headings.
    private func missingLinks(in prose: String, page: String) -> [String] {
        let folder = (page as NSString).deletingLastPathComponent
        var problems: [String] = []
        for link in Self.matches(#"\]\(([^)\s]+)\)"#, in: prose).map({ $0[1] }) where !link.contains("://") {
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let target = parts[0].isEmpty ? page : Self.normalized(folder.isEmpty ? parts[0] : folder + "/" + parts[0])
            guard exists(target) else {
                problems.append("link \(link): \(target) does not exist")
                continue
            }
            if parts.count == 2, let text = contents(target), !Self.headings(in: text).contains(parts[1]) {
                problems.append("link \(link): no heading \(parts[1]) in \(target)")
            }
        }
        return problems
    }

    // MARK: Markdown

    /// The page's prose and its fenced code, apart.
    static func split(_ markdown: String) -> (prose: String, code: String) {
        var prose: [Substring] = []
        var code: [Substring] = []
        var inCode = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inCode.toggle()
            } else if inCode {
                code.append(line)
            } else {
                prose.append(line)
            }
        }
        return (prose.joined(separator: "\n"), code.joined(separator: "\n"))
    }

    /// The anchors GitHub makes of the page's headings.
    static func headings(in markdown: String) -> Set<String> {
        Set(
            split(markdown).prose.split(separator: "\n").filter { $0.hasPrefix("#") }.map { line in
                let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
                return String(title.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || " -_".unicodeScalars.contains($0) })
                    .replacingOccurrences(of: " ", with: "-")
            })
    }

    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", !parts.isEmpty { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    /// Every match of `pattern`, each as its whole text and its groups ("" for a group that did not take part).
    static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let expression = try? NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]) else { return [] }
        let string = text as NSString
        return expression.matches(in: text, range: NSRange(location: 0, length: string.length)).map { match in
            (0..<match.numberOfRanges).map { match.range(at: $0).location == NSNotFound ? "" : string.substring(with: match.range(at: $0)) }
        }
    }
}

extension DocChecker {
    // MARK: The repository

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The pages under docs/.
    static func pages() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// Variables imago reads that are not settings, each where it is read.
    static let otherVariables: Set<String> = [
        "IMAGO_KEY", "IMAGO_SALT", "IMAGO_ADMIN_TOKEN",  // ServeConfiguration
        "IMAGO_WITHOUT_OTEL",  // Package.swift
        "IMAGO_UPDATE_DOCS",  // ServeConfigurationTests
        "IMAGO_MOTO_VENV", "IMAGO_CRASH_KILLS", "IMAGO_PNGSUITE", "IMAGO_BASELINE", "IMAGO_BASELINE_IMAGE",  // scripts/ and Benchmarks/
    ]

    /// Names of other projects that the docs write like types: the standard
    /// library's, Foundation's, NIO's, swift-log's, Hummingbird's and
    /// AsyncHTTPClient's types; HTTP field names; imgproxy's boolean `True`.
    static let externalTypes: Set<String> = [
        "Data", "Duration", "HTTPClient", "HTTPFields", "Int", "Mutex", "NIOSingletons", "Process", "Router", "ServiceContext",
        "StreamLogHandler", "URL",
        "Accept", "Age", "Authorization", "Connection", "Cookie", "Date", "ETag", "Expires", "Host", "Location", "Pragma", "Range", "Vary",
        "True",
    ]
    /// Functions of other projects (glibc, NIO) that the docs name, alone or as a member.
    static let externalFunctions: Set<String> = ["malloc_trim", "unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor"]
    /// Flags of other tools that the docs write as `--flag` spans: docker's,
    /// and those of the repository's scripts and benchmarks.
    static let otherToolFlags: Set<String> = ["memory", "stop-timeout", "duration", "served-only", "validators", "whole"]

    /// A checker of this repository: its declarations, and the flags the built `imago` takes.
    static func repository() async throws -> DocChecker {
        var source = ""
        var swiftFiles: Set<String> = []
        for folder in ["Sources", "Tests", "Examples", "Benchmarks", "Fuzz"] {
            let url = root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles]) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" {
                source += (try? String(contentsOf: file, encoding: .utf8)) ?? ""
                swiftFiles.insert(file.lastPathComponent)
            }
        }
        // Module names are their targets' folders.
        let modules = ["Sources", "Tests", "Examples", "Benchmarks/Sources", "Benchmarks/Benchmarks", "Fuzz/Sources"].flatMap {
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent($0).path)) ?? []
        }
        let declared = { (keywords: String) in Set(matches(#"\b(?:"# + keywords + #")\s+([A-Za-z_]\w*)"#, in: source).map { $0[1] }) }
        let caseLists = matches(
            #"^\s*(?:(?:public|package|indirect)\s+)*case\s+([a-z]\w*(?:\([^)]*\))?(?:\s*,\s*[a-z]\w*(?:\([^)]*\))?)*)"#, in: source)
        let caseNames = caseLists.flatMap { matches(#"(?:^|,)\s*([a-z]\w*)"#, in: $0[1]).map { $0[1] } }
        let thumborFilters = matches(
            #"case "([a-z_]+)""#,
            in: try String(contentsOf: root.appendingPathComponent("Sources/ImagoServer/Thumbor/ThumborFilter.swift"), encoding: .utf8)
        ).map { $0[1] }

        // `imago --experimental-dump-help` describes every subcommand and its options.
        let imago = try ChildProcess("imago", arguments: ["--experimental-dump-help"])
        let (dump, status) = await imago.allOutput()
        #expect(status == .exited(0))
        var flags = Set(ServeConfiguration.settings.map(\.flag))
        var commands: Set<String> = []
        func collect(_ command: [String: Any]) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    if let flag = name["name"] as? String { flags.insert(flag) }
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] {
                if let name = subcommand["commandName"] as? String { commands.insert(name) }
                collect(subcommand)
            }
        }
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        collect(try #require(tree["command"] as? [String: Any]))

        return DocChecker(
            flags: flags.union(otherToolFlags), commands: commands, variables: Set(ServeConfiguration.settings.map(\.variable)).union(otherVariables),
            types: declared("struct|class|enum|protocol|actor|typealias|associatedtype").union(modules).union(externalTypes),
            members: declared("func|var|let|case|struct|class|enum|protocol|actor|typealias").union(caseNames).union(externalFunctions),
            functions: declared("func").union(caseNames).union(thumborFilters).union(externalFunctions), swiftFiles: swiftFiles,
            exists: { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path) },
            contents: { try? String(contentsOf: root.appendingPathComponent($0), encoding: .utf8) })
    }
}
