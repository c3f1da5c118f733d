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

-- The body, with "%s-%d-%d" where the referenceNo goes; a script that
-- sets BODY_FORMAT before loading this one sends its own.
BODY_FORMAT = BODY_FORMAT or
  '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"%s-%d-%d","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}'

function request()
  counter = counter + 1
  local body = string.format(BODY_FORMAT, tag, tid, counter)
  return wrk.format(nil, "/api/payments/initiate", nil, body)
end
