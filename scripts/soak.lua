-- Mixed load for scripts/soak.sh: three initiates (unique references) then
-- one status-by-reference look-up of a reference this thread made 16
-- initiates earlier (the latest may still be in flight on another connection).
local tag = os.getenv("WRK_TAG") or tostring(os.time())
local merchant = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"
local threads = 0
local counter = 0
local made = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  tid = tid or 1
end

function request()
  counter = counter + 1
  if counter % 4 == 0 and made > 16 then
    return wrk.format("GET", string.format(
      "/api/payments/reference/%s-%d-%d/status?merchantId=%s", tag, tid, made - 16, merchant))
  end
  made = made + 1
  local body = string.format(
    '{"merchantId":"%s","referenceNo":"%s-%d-%d","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}',
    merchant, tag, tid, made)
  return wrk.format("POST", "/api/payments/initiate", {["Content-Type"] = "application/json"}, body)
end
