-- wrk script for scripts/cluster.sh: walks the request list written by
-- cluster.py (`accept-index<TAB>path` a line, Accept headers in LIST.accepts),
-- each thread from its own offset, and counts every status it gets, so the
-- report can call anything but 2xx and 304 a failure (wrk's own count
-- misses 3xx). Usage: wrk -s load.lua URL -- LIST THREADS

local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local position = 1
-- A global, so that done() can read each thread's with thread:get.
statuses = {}

function init(args)
  local list, thread_count = args[1], tonumber(args[2])
  local accepts = {}
  for line in io.lines(list .. ".accepts") do
    table.insert(accepts, line)
  end
  for line in io.lines(list) do
    local variant, path = line:match("^(%d+)\t(.+)$")
    if variant then
      table.insert(requests, wrk.format("GET", path, { Accept = accepts[tonumber(variant) + 1] }))
    end
  end
  position = math.floor(#requests * id / thread_count) + 1
end

function request()
  local encoded = requests[position]
  position = position % #requests + 1
  return encoded
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

-- One line the report reads: `wrk-result {json}`, the statuses summed over
-- the threads.
function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(total) do
    table.insert(parts, string.format('"%d": %d', status, count))
  end
  local errors = summary.errors
  io.write(string.format(
    'wrk-result {"requests": %d, "statuses": {%s}, "connect": %d, "read": %d, "write": %d, "timeout": %d, "latency_p50_ms": %.1f, "latency_p99_ms": %.1f}\n',
    summary.requests, table.concat(parts, ", "), errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
