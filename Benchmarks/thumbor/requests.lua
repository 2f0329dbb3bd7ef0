-- wrk script for thumbor-compare.sh: the same source URLs, spelled for
-- thumbor or for imago serve.
--
--   wrk ... -s requests.lua http://HOST:PORT -- SERVER MODE FORMAT SIZE ORIGIN TAG FILES
--
-- SERVER thumbor|imago; MODE cold (every request a source URL never asked
-- for before: the origin maps /s/SIZE/FILE/anything.jpg to FILE.jpg) or
-- warm (the same 200 URLs over and over); FORMAT jpeg|webp; SIZE the
-- origin's folder (1024, 4000); ORIGIN host:port; TAG makes this round's
-- URLs its own; FILES how many distinct images the folder holds.

local next_id = 0

function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end

local function encode(text)
    return (text:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
    server, mode, format, size, origin, tag, files = args[1], args[2], args[3], args[4], args[5], args[6], tonumber(args[7])
    if server == "thumbor" then
        prefix = "/unsafe/fit-in/256x256/filters:format(" .. format .. "):quality(80)/"
    else
        prefix = "/unsafe/w:256/h:256/f:" .. format .. "/q:80/plain/"
    end
    -- Each thread starts elsewhere in the warm set, so that the two do not
    -- ask for the same URL at the same moment.
    n = (id or 0) * 100
end

function source(k)
    if mode == "warm" then
        k = k % 200
        return "http://" .. origin .. "/s/" .. size .. "/" .. (k % files) .. "/warm-" .. k .. ".jpg"
    end
    return "http://" .. origin .. "/s/" .. size .. "/" .. (k % files) .. "/" .. tag .. "-" .. id .. "-" .. k .. ".jpg"
end

function path(k)
    if server == "thumbor" then
        return prefix .. source(k):sub(8) -- thumbor takes the URL without its scheme
    end
    return prefix .. encode(source(k))
end

function request()
    n = n + 1
    return wrk.format("GET", path(n))
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("RESULT %d %d %.1f %.1f %d %d %d %d %d %d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        e.connect, e.read, e.write, e.status, e.timeout, latency.max))
end
