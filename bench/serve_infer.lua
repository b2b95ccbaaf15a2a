-- wrk script: POSTs KServe v2 infer requests for fashion_mlp to `dmlc serve`,
-- cycling through the bodies of BODIES (one JSON per line, written by
-- bench/serve_bodies.py from Fashion-MNIST test images).
--   BODIES=bodies.jsonl wrk -t2 -c64 -d30s --latency -s bench/serve_infer.lua \
--     http://127.0.0.1:PORT/v2/models/fashion_mlp/infer
local bodies = {}
local next_body = 1
local bad = 0

function init(args)
  local path = os.getenv("BODIES") or "bodies.jsonl"
  for line in io.lines(path) do
    bodies[#bodies + 1] = line
  end
  if #bodies == 0 then
    error("no request bodies in " .. path)
  end
  -- each wrk thread starts at another body
  next_body = (math.random(#bodies) - 1) % #bodies + 1
end

function request()
  local body = bodies[next_body]
  next_body = next_body % #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"logits"', 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  io.write(string.format("requests %d, errors (connect/read/write/status/timeout) %d/%d/%d/%d/%d\n",
    summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write,
    summary.errors.status, summary.errors.timeout))
  io.write(string.format("latency us: p50 %d p90 %d p99 %d max %d\n",
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
