-- POST /api/payments/initiate with a unique referenceNo per request:
-- "<WRK_TAG>-<thread>-<n>". WRK_TAG must differ between runs against one
-- server (scripts/load.sh passes the run number and a timestamp).
dofile("perf/wrk/report.lua")

local tag = os.getenv("WRK_TAG") or tostring(os.time())
local thread_number = 0
local counter = 0

function setup(thread)
  thread_number = thread_number + 1
  thread:set("tid", thread_number)
end

function init(args)
  tid = tid or 1
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  counter = counter + 1
  local body = string.format(
    '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"%s-%d-%d","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}',
    tag, tid, counter)
  return wrk.format(nil, "/api/payments/initiate", nil, body)
end
