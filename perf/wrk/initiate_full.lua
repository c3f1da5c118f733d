-- POST /api/payments/initiate with every field of the interface document's
-- initiate request (section 2.2); otherwise as perf/wrk/initiate.lua.
BODY_FORMAT =
  '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"%s-%d-%d","description":"Mobile top-up RM10.50","amount":1050,"currencyCode":"MYR","productCode":"TOPUP","quantity":1,"countryCode":"MY","storeId":"S1","deviceId":"POS-0042","payerId":"60123456789","extraProperties":"{\\"channel\\":\\"app\\",\\"promo\\":\\"NOV26\\"}"}'
dofile("perf/wrk/initiate.lua")
