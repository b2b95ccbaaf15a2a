# Timings of the Elixir package on fashion_mlp (docs/elixir.md, "Measured"):
#   DMLC_PREFIX=P DMLC_SHARED_DIR=../../../shared mix run bench/bench.exs
# Dmlc.benchmark's loop in C, Dmlc.predict! from Elixir (a dirty NIF call
# and the output's binary), and Dmlc.Serving under 64 concurrent callers of
# one row each.
shared = System.get_env("DMLC_SHARED_DIR") || Path.expand("../../../../shared", __DIR__)
m = Dmlc.compile!(Path.join(shared, "models/fashion_mlp.onnx"))
{:ok, x} = Dmlc.Npy.load(Path.join(shared, "models/fashion_mlp_io/input_1.npy"))

b = Dmlc.benchmark!(m, %{"input" => x}, iterations: 500, warmup: 50)

IO.puts(
  "Dmlc.benchmark batch 64: median #{Float.round(b.median, 4)} ms, min #{Float.round(b.min, 4)} ms"
)

ts =
  for _ <- 1..500 do
    t0 = System.monotonic_time(:microsecond)
    Dmlc.predict!(m, x)
    System.monotonic_time(:microsecond) - t0
  end
  |> Enum.sort()

IO.puts("Dmlc.predict! batch 64: median #{Enum.at(ts, 250) / 1000} ms, min #{hd(ts) / 1000} ms")

{:ok, srv} = Dmlc.Serving.start_link(model: m, batch_size: 64, batch_timeout: 2)
one = %{"input" => Dmlc.Tensor.from_binary(binary_part(x.data, 0, 784 * 4), {:f, 32}, {1, 784})}

{t, _} =
  :timer.tc(fn ->
    1..2000
    |> Task.async_stream(fn _ -> {:ok, _} = Dmlc.Serving.run(srv, one) end, max_concurrency: 64)
    |> Stream.run()
  end)

{:ok, st} = Dmlc.Serving.stats(srv)

IO.puts(
  "Dmlc.Serving, 2000 one-row requests from 64 processes: #{round(2000 / (t / 1.0e6))} requests/s, " <>
    "#{Float.round(st.mean_rows_per_run, 1)} rows/run, latency p50 #{Float.round(st.latency_ms_p50, 2)} ms"
)
