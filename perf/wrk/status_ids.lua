-- GET /api/payments/{id}/status for an id drawn at random from WRK_IDS
-- (lines "transactionId referenceNo", written by perf-scale), so look-ups
-- spread over the whole store rather than hitting one cached record.
dofile("perf/wrk/report.lua")

local ids = {}

function init(args)
  for line in io.lines(os.getenv("WRK_IDS")) do
    local id = line:match("^(%S+)")
    if id then ids[#ids + 1] = "/api/payments/" .. id .. "/status" end
  end
  math.randomseed(7)
end

function request()
  return wrk.format("GET", ids[math.random(#ids)])
end
