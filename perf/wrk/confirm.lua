-- POST /api/payments/confirm for each line "transactionId referenceNo" of
-- the file WRK_POOL (written by perf-preload), in order, one thread. Each
-- transaction confirms once: when the pool runs out the script starts over
-- and the server answers TRANSACTION_ALREADY_CONFIRMED (400), which shows
-- as non2xx in the RESULT line. With a pool that is already confirmed this
-- measures that refusal path on purpose.
dofile("perf/wrk/report.lua")

local pool = {}
local next_index = 0

function init(args)
  for line in io.lines(os.getenv("WRK_POOL")) do
    local id, ref = line:match("^(%S+) (.+)$")
    if id then
      pool[#pool + 1] = string.format('{"transactionId":"%s","referenceNo":"%s"}', id, ref)
    end
  end
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  next_index = next_index % #pool + 1
  return wrk.format(nil, "/api/payments/confirm", nil, pool[next_index])
end
