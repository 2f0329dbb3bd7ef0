/// wrk's Lua scripts. Arguments after `--`: the first request's number,
/// the layout (`box`, `fill` or `smart`), then the 16 sources (base64url).
/// Request i asks for source i mod 16: with `box`, in a box 256 wide and
/// 192 + i / 16 high (a 1024x768 source fits 256x192 in every such box);
/// with `fill`, filled and cut to 256x256 with the cache buster i; with
/// `smart`, the same cut by the smart crop (`g:sm`). Each i is a new answer
/// of the same work.
enum WrkScripts {
    /// Request numbers per round: a round starts at round * perRound.
    static let perRound = 12_000
    /// Past the last round's (9 at most); the highest box stays within 8192.
    static let warmUpFirst = 9 * perRound

    /// Every request a new transformation.
    static let transform =
        common + """
            function request()
              local i = first + n
              n = n + 1
              return path(i)
            end
            """

    /// The same 160 answers over and over: result-cache hits.
    static let hits =
        common + """
            function request()
              local i = first + n % 160
              n = n + 1
              return path(i)
            end
            """

    private static let common = """
        local first, layout, sources, n = 0, "box", {}, 0
        function init(args)
          first = tonumber(args[1])
          layout = args[2]
          for i = 3, #args do sources[#sources + 1] = args[i] end
        end
        function path(i)
          local options = "w:256/h:" .. (192 + math.floor(i / 16))
          if layout == "fill" then options = "rs:fill:256:256/cb:" .. i end
          if layout == "smart" then options = "rs:fill:256:256/g:sm/cb:" .. i end
          return wrk.format("GET", "/unsafe/" .. options .. "/f:jpeg/q:80/" .. sources[i % 16 + 1])
        end
        -- One line for the driver: requests, microseconds, status errors, socket errors, p99 in microseconds.
        function done(summary, latency, requests)
          local e = summary.errors
          io.write(string.format("result %d %d %d %d %d\\n", summary.requests, summary.duration, e.status,
            e.connect + e.read + e.write + e.timeout, latency:percentile(99)))
        end

        """
}
