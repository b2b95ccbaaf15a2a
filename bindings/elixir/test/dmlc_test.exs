defmodule DmlcTest do
  use ExUnit.Case, async: false
  import Dmlc.TestData

  alias Dmlc.{Error, Tensor}

  setup_all do
    {x, y} = fashion(:train, 0, 2048)
    {vx, vy} = fashion(:test, 0, 512)
    %{x: x, y: y, vx: vx, vy: vy}
  end

  defp close?(a, b), do: abs(a - b) < 1.0e-12

  defp trainable(opts \\ []) do
    Dmlc.compile!(
      model("fashion_mlp_untrained.onnx"),
      Keyword.merge([loss: :cross_entropy, optimizer: :adam, learning_rate: 1.0e-3], opts)
    )
  end

  test "the NIF is loaded; devices, targets" do
    assert Dmlc.available?()
    assert [%{id: "cpu", default: true} | _] = Dmlc.devices()
    assert is_boolean(Dmlc.gpu?())
    assert Dmlc.default_device() == "cpu"
    assert Dmlc.available_targets() =~ "cpu"
  end

  test "predict of the trained fashion_mlp equals its reference and `dmlc run`" do
    m = Dmlc.compile!(model("fashion_mlp.onnx"))
    assert [%{name: "input", dtype: "f32", shape: {"batch", 784}, bounds: {64, 784}}] = m.inputs
    refute m.trainable
    {:ok, x} = Dmlc.Npy.load(model("fashion_mlp_io/input_1.npy"))
    {:ok, ref} = Dmlc.Npy.load(model("fashion_mlp_io/output_1.npy"))
    y = Dmlc.predict!(m, x)
    assert y.shape == {64, 10} and y.type == {:f, 32}
    assert max_abs_diff(y, ref) < 1.0e-4

    # the same bytes as the command's output on the same package
    pkg = tmp("fashion_mlp.dmlpkg")
    :ok = Dmlc.save(m, pkg)
    out = tmp("run_out")
    File.mkdir_p!(out)
    bin = dmlc_bin()

    {log, 0} =
      System.cmd(
        bin,
        [
          "run",
          pkg,
          "--input",
          "input=" <> model("fashion_mlp_io/input_1.npy"),
          "--output-dir",
          out
        ],
        stderr_to_stdout: true
      )

    {:ok, cmd} = Dmlc.Npy.load(Path.join(out, "#{hd(m.outputs).name}.npy"))
    assert cmd.data == y.data, "dmlc run: #{log}"

    # run/3 gives the same for one batch; predict chunks rows beyond the bound
    {:ok, %{"logits" => r}} = Dmlc.run(m, %{"input" => x})
    assert r.data == y.data

    big =
      Tensor.from_binary(
        x.data <> x.data <> binary_part(x.data, 0, 784 * 4 * 3),
        {:f, 32},
        {131, 784}
      )

    yb = Dmlc.predict!(m, big)
    assert yb.shape == {131, 10}
    assert binary_part(yb.data, 0, byte_size(y.data)) == y.data
    assert binary_part(yb.data, byte_size(y.data), byte_size(y.data)) == y.data
    # a NaN pixel makes its row's logits NaN, and only its row's
    <<_::binary-size(4), rest::binary>> = x.data
    xn = Tensor.from_binary(<<0x7FC00000::unsigned-32-native>> <> rest, {:f, 32}, x.shape)
    yn = Dmlc.predict!(m, xn)
    assert Enum.take(Tensor.to_flat_list(yn), 10) == List.duplicate(:nan, 10)

    assert binary_part(yn.data, 40, byte_size(yn.data) - 40) ==
             binary_part(y.data, 40, byte_size(y.data) - 40)

    # one model from many processes at once: calls serialize, results equal
    for r <- Task.async_stream(1..16, fn _ -> Dmlc.predict!(m, x) end, max_concurrency: 16),
        do: assert(r == {:ok, y})

    # 0 rows: the output's shape with 0 rows
    assert %Tensor{shape: {0, 10}, data: ""} =
             Dmlc.predict!(m, Tensor.from_binary(<<>>, {:f, 32}, {0, 784}))

    assert Dmlc.summary!(m) =~ "Gemm"

    assert %{min: _, median: med, iterations: 5} =
             Dmlc.benchmark!(m, %{"input" => x}, iterations: 5, warmup: 1)

    assert med > 0
  end

  test "fit lowers the loss, reaches accuracy; evaluate, progress, save/load", ctx do
    m = trainable()
    assert m.trainable and "train_step" in m.functions

    h =
      Dmlc.fit!(m, {ctx.x, ctx.y},
        epochs: 3,
        batch_size: 32,
        validation_data: {ctx.vx, ctx.vy},
        callbacks: [Dmlc.Callback.progress(self(), batches: true), Dmlc.Callback.logger()]
      )

    assert length(h.epochs) == 3
    [l1, _, l3] = h.loss
    assert l3 < l1
    assert List.last(h.val_accuracy) > 0.72
    assert h.lr == [1.0e-3, 1.0e-3, 1.0e-3]
    for e <- 1..3, do: assert_received({:dmlc_progress, :epoch, %{epoch: ^e}})
    # 2048 rows / 32 = 64 steps per epoch
    assert_received {:dmlc_progress, :batch, %{epoch: 1, batch: 1, batches: 64}}
    assert_received {:dmlc_progress, :batch, %{epoch: 3, batch: 64, step: 192}}

    %{loss: vl, accuracy: va} = Dmlc.evaluate!(m, {ctx.vx, ctx.vy})
    assert_in_delta vl, List.last(h.val_loss), 1.0e-6
    assert_in_delta va, List.last(h.val_accuracy), 1.0e-9

    # a fit continues where the last stopped
    h2 = Dmlc.fit!(m, {ctx.x, ctx.y}, epochs: 4, batch_size: 32)
    assert [%{epoch: 4}] = h2.epochs

    # the saved package holds the trained parameters
    p = tmp("trained.dmlpkg")
    :ok = Dmlc.save(m, p)
    m2 = Dmlc.load!(p)
    assert m2.trainable
    assert Dmlc.load!(File.read!(p)).trainable
    assert Dmlc.predict!(m2, ctx.vx).data == Dmlc.predict!(m, ctx.vx).data
    assert Dmlc.evaluate!(m2, {ctx.vx, ctx.vy}).loss == Dmlc.evaluate!(m, {ctx.vx, ctx.vy}).loss

    # a trained model is served with its trained parameters
    start_supervised!({Dmlc.Serving, model: m, name: :trained, batch_size: 8})
    {:ok, reply} = Dmlc.Serving.run(:trained, %{"input" => rows(ctx.vx, 0, 5)})
    assert [sy] = Map.values(reply)
    assert sy.data == Dmlc.predict!(m, rows(ctx.vx, 0, 5)).data
    refute sy.data == Dmlc.predict!(trainable(), rows(ctx.vx, 0, 5)).data
  end

  test "early stopping, a halting callback, checkpoints, lr schedules", ctx do
    small = {rows(ctx.x, 0, 512), rows(ctx.y, 0, 512)}
    val = {rows(ctx.vx, 0, 256), rows(ctx.vy, 0, 256)}

    # nothing improves by 10: stops after patience 1, restoring epoch 1
    h =
      Dmlc.fit!(trainable(), small,
        epochs: 6,
        validation_data: val,
        callbacks: [Dmlc.Callback.early_stopping(patience: 1, min_delta: 10.0)]
      )

    assert length(h.epochs) == 2 and h.stopped_early and h.best_epoch == 1 and h.restored

    dir = tmp("ckpt")
    File.rm_rf!(dir)

    h =
      Dmlc.fit!(trainable(), small,
        epochs: 6,
        lr_schedule: {:step, 1, 0.5},
        callbacks: [
          Dmlc.Callback.checkpoint(dir),
          Dmlc.Callback.on_epoch(fn m -> if m.epoch == 2, do: :halt, else: :cont end)
        ]
      )

    assert length(h.epochs) == 2 and h.stopped_early
    assert h.lr == [1.0e-3, 5.0e-4]
    assert h.val_loss == [:nan, :nan]

    # the other schedules' rates (runtime/train/dml_trainer.h's formulas)
    one = {rows(ctx.x, 0, 32), rows(ctx.y, 0, 32)}

    lrs = fn sched ->
      Dmlc.fit!(trainable(), one, epochs: 3, lr_schedule: sched, learning_rate: 0.01).lr
    end

    assert lrs.({:exponential, 0.5}) == [0.01, 0.005, 0.0025]
    [c0, c1, c2] = lrs.({:cosine, 0.0})
    assert c0 == 0.01 and close?(c1, 0.0075) and close?(c2, 0.0025)
    assert File.exists?(Path.join(dir, "epoch-0001.safetensors"))
    assert File.exists?(Path.join(dir, "epoch-0002.safetensors"))

    # resuming from a checkpoint continues exactly as the uninterrupted run
    m1 = trainable()
    h1 = Dmlc.fit!(m1, small, epochs: 1, callbacks: [Dmlc.Callback.checkpoint(dir)])
    m2 = trainable()
    :ok = Dmlc.load_checkpoint(m2, Path.join(dir, "epoch-0001.safetensors"))
    assert Dmlc.predict!(m2, elem(val, 0)).data == Dmlc.predict!(m1, elem(val, 0)).data
    assert Dmlc.fit!(m2, small, epochs: 2).loss == Dmlc.fit!(m1, small, epochs: 2).loss
    assert length(h1.epochs) == 1
    own = tmp("own.safetensors")
    :ok = Dmlc.save_checkpoint(m2, own)

    assert {:error, %Error{code: :failed_precondition}} =
             Dmlc.load_checkpoint(Dmlc.compile!(model("fashion_mlp.onnx")), own)

    assert {:error, %Error{}} = Dmlc.load_checkpoint(trainable(), "/nonexistent.safetensors")

    # during a fit its model refuses calls at once (info excepted)
    mf = trainable()
    me = self()

    Dmlc.fit!(mf, small,
      epochs: 1,
      callbacks: [
        Dmlc.Callback.on_epoch(fn _ ->
          send(me, {:during, Dmlc.predict(mf, elem(val, 0)), Dmlc.info(mf)})
        end)
      ]
    )

    assert_received {:during,
                     {:error,
                      %Error{code: :failed_precondition, reason: "the model is being fitted" <> _}},
                     {:ok, %{trainable: true}}}

    assert {:ok, _} = Dmlc.predict(mf, elem(val, 0))

    # a raising callback stops the fit and reaches the caller
    assert_raise RuntimeError, "boom", fn ->
      Dmlc.fit(trainable(), small,
        epochs: 3,
        callbacks: [Dmlc.Callback.on_epoch(fn _ -> raise "boom" end)]
      )
    end
  end

  test "a caller that dies ends its fit; the model is usable after", ctx do
    m = trainable()
    parent = self()

    pid =
      spawn(fn ->
        Dmlc.fit(m, {ctx.x, ctx.y},
          epochs: 1000,
          callbacks: [Dmlc.Callback.progress(parent, batches: true)]
        )
      end)

    assert_receive {:dmlc_progress, :batch, %{step: 3}}, 10_000
    Process.exit(pid, :kill)
    # the fit stops at its next step once its listener is gone
    wait = fn wait, n ->
      case Dmlc.evaluate(m, {rows(ctx.vx, 0, 64), rows(ctx.vy, 0, 64)}) do
        {:ok, r} ->
          r

        {:error, %Error{reason: "the model is being fitted" <> _}} when n > 0 ->
          Process.sleep(20)
          wait.(wait, n - 1)
      end
    end

    assert %{loss: l} = wait.(wait, 250)
    assert is_float(l)
  end

  @tag :vulkan
  test "Vulkan: predict and fit on a vulkan device match the CPU", ctx do
    if Enum.any?(Dmlc.devices(), &String.starts_with?(&1.id, "vulkan")) do
      m = Dmlc.compile!(model("fashion_mlp.onnx"), targets: "cpu,vulkan")
      {:ok, x} = Dmlc.Npy.load(model("fashion_mlp_io/input_1.npy"))
      assert max_abs_diff(Dmlc.predict!(m, x, device: "vulkan"), Dmlc.predict!(m, x)) < 1.0e-4

      # the kernels' self-check on the device (dmlc check)
      rep = Dmlc.check!(m, "vulkan", iterations: 1)
      assert rep.n_failed == 0 and rep.device =~ "vulkan"
      assert length(rep.kernels) >= 2 and List.last(rep.kernels).name == "end-to-end"
      assert Enum.all?(rep.kernels, &(&1.passed or not &1.checked))
      assert {:error, %Error{code: :invalid_argument}} = Dmlc.check(m, "cpu")

      small = {rows(ctx.x, 0, 128), rows(ctx.y, 0, 128)}
      tv = trainable(targets: "cpu,vulkan")
      tc = trainable()
      hv = Dmlc.fit!(tv, small, epochs: 2, device: "vulkan")
      hc = Dmlc.fit!(tc, small, epochs: 2)

      for {a, b} <- Enum.zip(hv.loss, hc.loss),
          do: assert_in_delta(a, b, 1.0e-3 * max(1.0, abs(b)))

      # its parameters live on the device it was trained on
      assert {:error, %Error{code: :failed_precondition}} = Dmlc.predict(tv, x, device: "cpu")
    else
      IO.puts("skipped: no Vulkan device")
    end
  end

  test "Dmlc.Serving batches concurrent requests; replies equal predict" do
    m = Dmlc.compile!(model("fashion_mlp.onnx"))
    {:ok, x} = Dmlc.Npy.load(model("fashion_mlp_io/input_1.npy"))

    start_supervised!(
      {Dmlc.Serving, model: m, name: :fmlp, batch_size: 16, batch_timeout: 50, instances: 2}
    )

    want = Dmlc.predict!(m, x)

    replies =
      for i <- 0..31 do
        n = rem(i, 3) + 1
        at = rem(i * 5, 60)
        Task.async(fn -> {at, n, Dmlc.Serving.run(:fmlp, %{"input" => rows(x, at, n)})} end)
      end
      |> Task.await_many(30_000)

    for {at, n, {:ok, %{"logits" => y}}} <- replies do
      assert y.shape == {n, 10}
      assert y.data == rows(want, at, n).data
    end

    assert length(replies) == 32
    {:ok, st} = Dmlc.Serving.stats(:fmlp)
    assert st.requests == 32 and st.requests_failed == 0
    assert st.runs < 32, "requests were batched: #{inspect(st)}"
    # one tensor for a one-input model; errors come back as %Dmlc.Error{}
    assert {:ok, _} = Dmlc.Serving.run(:fmlp, rows(x, 0, 2))

    assert {:error, %Error{code: :invalid_argument, op: "serve.submit"}} =
             Dmlc.Serving.run(:fmlp, %{"input" => Tensor.from_binary(<<0::64>>, {:f, 32}, {1, 2})})

    # the server keeps the model's native memory after free/1
    :ok = Dmlc.free(m)
    assert {:ok, _} = Dmlc.Serving.run(:fmlp, rows(x, 0, 1))
  end

  test "a serving killed with requests queued is collected cleanly" do
    m = Dmlc.compile!(model("fashion_mlp.onnx"))
    {:ok, x} = Dmlc.Npy.load(model("fashion_mlp_io/input_1.npy"))
    threads = fn -> length(File.ls!("/proc/self/task")) end
    :erlang.garbage_collect()
    n0 = threads.()
    # a batch that never fills (12 of 64 rows) within the test: the kill, not
    # the batch timeout, must end every request however slow the machine
    {:ok, pid} = Dmlc.Serving.start_link(model: m, batch_size: 64, batch_timeout: 600_000)
    Process.unlink(pid)
    assert threads.() == n0 + 1
    me = self()

    for i <- 1..6,
        do:
          spawn(fn ->
            send(me, {:caller, i, catch_exit(Dmlc.Serving.run(pid, %{"input" => rows(x, i, 2)}))})
          end)

    Process.sleep(50)
    Process.exit(pid, :kill)
    for i <- 1..6, do: assert_receive({:caller, ^i, {:killed, _}}, 5_000)
    # the server's resource went with its process: its destructor stopped
    # the workers, failing the queued requests without sending anything
    wait = fn wait, k ->
      if threads.() > n0 and k > 0,
        do:
          (
            Process.sleep(20)
            wait.(wait, k - 1)
          ),
        else: threads.()
    end

    assert wait.(wait, 250) <= n0, "the server's worker thread is gone"
    assert {:ok, _} = Dmlc.predict(m, rows(x, 0, 2))
  end

  test "errors carry code, op, reason, details; bang functions raise" do
    assert {:error, %Error{code: :not_found, op: "elixir.compile"}} =
             Dmlc.compile("/nonexistent/model.onnx")

    assert {:error, %Error{code: :data_loss}} = Dmlc.compile(<<0, 1, 2, 3, 255, 255>>)

    assert {:error, %Error{code: :invalid_argument} = e} =
             Dmlc.compile(model("fashion_mlp.onnx"), loss: :hinge)

    assert e.reason =~ "hinge" or e.details =~ "cross_entropy"

    m = Dmlc.compile!(model("fashion_mlp.onnx"))
    bad = Tensor.from_binary(<<0::size(32 * 3 * 784)>>, {:s, 32}, {3, 784})
    assert {:error, %Error{op: op, reason: reason} = e} = Dmlc.run(m, %{"input" => bad})
    assert op =~ "rt." and reason =~ "input"
    assert Exception.message(e) =~ reason

    assert {:error, %Error{code: :out_of_range}} =
             Dmlc.run(m, %{
               "input" => Tensor.from_binary(<<0::size(32 * 65 * 784)>>, {:f, 32}, {65, 784})
             })

    assert {:error, %Error{code: :failed_precondition, reason: reason}} =
             Dmlc.fit(m, {bad, bad}, epochs: 1)

    assert reason =~ "train_step"

    assert {:error, %Error{code: :invalid_argument}} =
             Dmlc.fit(trainable(), {bad, bad}, lr_schedule: {:bogus})

    # symbolic dims' bounds and input shapes, as dmlc compile's flags
    assert [%{bounds: {8, 784}}] =
             Dmlc.compile!(model("fashion_mlp.onnx"), dim_bounds: %{"batch" => 8}).inputs

    assert [%{bounds: {16, 784}}] =
             Dmlc.compile!(model("fashion_mlp.onnx"), dim_bounds: 16).inputs

    assert [%{shape: {"batch", 784}, bounds: {12, 784}}] =
             Dmlc.compile!(model("fashion_mlp.onnx"), input_shapes: %{"input" => {{1, 12}, 784}}).inputs

    assert [%{shape: {3, 784}}] =
             Dmlc.compile!(model("fashion_mlp.onnx"), input_shapes: [input: "3x784"]).inputs

    assert {:error, %Error{code: :invalid_argument, reason: r}} =
             Dmlc.compile(model("fashion_mlp.onnx"), input_shapes: [input: "3x[9:2]"])

    assert r =~ "input"

    assert {:error, %Error{code: :invalid_argument}} =
             Dmlc.compile(model("fashion_mlp.onnx"), input_shapes: [input: {:bad}])

    # arguments that are not tensors are errors too, not exceptions
    assert {:error, %Error{code: :invalid_argument}} = Dmlc.predict(m, "x")
    assert {:error, %Error{code: :invalid_argument}} = Dmlc.run(m, [1, 2])
    assert {:error, %Error{code: :invalid_argument}} = Dmlc.fit(m, :data)
    assert {:error, %Error{code: :invalid_argument}} = Dmlc.fit(m, {bad, bad}, callbacks: [:nope])
    assert {:error, %Error{code: :invalid_argument}} = Dmlc.evaluate(m, {bad, 1})

    e = assert_raise Error, fn -> Dmlc.load!("/nonexistent.dmlpkg") end
    assert e.code == :not_found
    assert_raise Error, ~r/DATA|data|package/, fn -> Dmlc.load!(String.duplicate(<<0>>, 100)) end
  end

  test "free/1 then use is an error, never a crash" do
    m = trainable()
    {x, y} = fashion(:test, 0, 8)
    :ok = Dmlc.free(m)

    for r <- [
          Dmlc.predict(m, x),
          Dmlc.run(m, %{"input" => x}),
          Dmlc.fit(m, {x, y}, epochs: 1),
          Dmlc.evaluate(m, {x, y}),
          Dmlc.save(m, tmp("x.dmlpkg")),
          Dmlc.info(m),
          Dmlc.free(m)
        ] do
      assert {:error, %Error{code: :failed_precondition, reason: "use after free"}} = r
    end

    assert_raise Error, ~r/use after free/, fn -> Dmlc.predict!(m, x) end
    # a model dropped without free/1 is collected
    for _ <- 1..3, do: Dmlc.compile!(model("fashion_mlp.onnx"))
    :erlang.garbage_collect()
  end

  test "Nx tensors are taken as they are (Nx's API, here a stand-in of it)" do
    m = Dmlc.compile!(model("fashion_mlp.onnx"))
    {:ok, x} = Dmlc.Npy.load(model("fashion_mlp_io/input_0.npy"))
    nx = %Nx.Tensor{data: x.data, type: {:f, 32}, shape: x.shape}
    assert Dmlc.predict!(m, nx).data == Dmlc.predict!(m, x).data
    assert %Nx.Tensor{shape: {1, 10}, type: {:f, 32}} = Dmlc.predict!(m, nx) |> Tensor.to_nx()
    assert {:ok, s} = Tensor.add(nx, nx)
    assert s.shape == {1, 784}
  end

  test "Dmlc.Npy writes what it reads" do
    t = Tensor.from_list([[1, -2, 3], [4, 5, -6]], {:s, 64})
    p = tmp("t.npy")
    :ok = Dmlc.Npy.save(t, p)
    assert {:ok, ^t} = Dmlc.Npy.load(p)
    assert {:error, %Error{code: :data_loss}} = Dmlc.Npy.load(model("fashion_mlp.onnx"))
  end

  test "eager tensor ops on the CPU" do
    a = Tensor.from_list([[1.0, 2.0], [3.0, 4.0]])
    b = Tensor.from_list([10.0, 20.0])
    assert {:ok, s} = Tensor.add(a, b)
    assert s.shape == {2, 2} and Tensor.to_flat_list(s) == [11.0, 22.0, 13.0, 24.0]
    {:ok, p} = Tensor.matmul(a, a)
    assert Tensor.to_flat_list(p) == [7.0, 10.0, 15.0, 22.0]
    {:ok, sm} = Tensor.softmax(a)
    [s1, s2] = Tensor.to_flat_list(elem(Tensor.sum(sm, [1]), 1))
    assert_in_delta s1, 1.0, 1.0e-6
    assert_in_delta s2, 1.0, 1.0e-6
    {:ok, am} = Tensor.argmax(a, 1)
    assert am.type == {:s, 64} and Tensor.to_flat_list(am) == [1, 1]
    {:ok, t} = Tensor.transpose(a)
    assert Tensor.to_flat_list(t) == [1.0, 3.0, 2.0, 4.0]
    {:ok, r} = Tensor.reshape(a, {4})
    assert r.shape == {4}

    {:ok, q} =
      Tensor.divide(Tensor.from_list([1.0, -1.0, 0.0]), Tensor.from_list([0.0, 0.0, 0.0]))

    assert Tensor.to_flat_list(q) == [:infinity, :neg_infinity, :nan]

    assert Tensor.from_list([:nan, :infinity, -0.0]) |> Tensor.to_flat_list() |> Enum.take(2) == [
             :nan,
             :infinity
           ]

    assert {:error, %Error{reason: reason}} = Tensor.matmul(a, Tensor.from_list([1.0, 2.0, 3.0]))
    assert reason =~ "shape"
    assert {:error, %Error{code: :not_found}} = Tensor.op("NoSuchOp", [a])
    assert Tensor.from_list([1, 2], {:s, 32}) |> Tensor.to_flat_list() == [1, 2]
    {:ok, f} = Tensor.as_type(Tensor.from_binary(<<0, 7, 255>>, {:u, 8}), {:f, 32})
    assert f.type == {:f, 32} and Tensor.to_flat_list(f) == [0.0, 7.0, 255.0]
    {:ok, i} = Tensor.as_type(Tensor.from_list([-1.7, 2.9]), :s32)
    assert Tensor.to_flat_list(i) == [-1, 2]
    h = Tensor.from_list([1.5, -2.0], :bf16)
    assert h.type == {:bf, 16} and Tensor.to_flat_list(h) == [1.5, -2.0]
  end

  # Device tensors (Dmlc.Tensor with a ref; runtime/dml_tensor.h). Exact:
  # copies, fills, Add/Mul/MatMul of small integers in f32; Softmax within
  # 1.0e-6 of the f64 formula.
  test "device tensors: create, copy, ops, free, memory back at start" do
    {:ok, before} = Tensor.device_memory("cpu")
    edge = <<0x7FC00000::unsigned-32-native, 0x7F800000::unsigned-32-native,
             0xFF800000::unsigned-32-native, 0x80000000::unsigned-32-native,
             0x00000001::unsigned-32-native, 1.0e30::float-32-native>>
    t = Tensor.from_binary(edge, {:f, 32}, {2, 3}, device: "cpu")
    assert is_reference(t.ref) and t.data == nil and Tensor.device(t) == "cpu"
    assert Tensor.shape(t) == {2, 3} and Tensor.type(t) == {:f, 32}
    # bits survive the round trip (NaN, infinities, -0, a denormal)
    assert Tensor.to_binary(t) == edge

    z = Tensor.zeros({2, 2}, {:s, 64})
    assert Tensor.to_binary(z) == <<0::size(256)>> and Tensor.type(z) == {:s, 64}
    o = Tensor.ones({3}, device: "cpu")
    assert Tensor.to_flat_list(o) == [1.0, 1.0, 1.0] and Tensor.type(o) == {:f, 32}
    f = Tensor.full({2, 2}, 2.5, {:f, 64})
    assert Tensor.to_flat_list(f) == [2.5, 2.5, 2.5, 2.5]
    assert Tensor.shape(Tensor.zeros({0, 4})) == {0, 4}

    a = Tensor.from_binary(for(x <- [1, 2, 3, 4, 5, 6], into: <<>>, do: <<x::float-32-native>>),
                           {:f, 32}, {2, 3}, device: "cpu")
    {:ok, s} = Tensor.add(a, a)
    assert is_reference(s.ref) and Tensor.to_flat_list(s) == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    # a binary tensor among the inputs is copied to the device
    {:ok, m} = Tensor.multiply(a, Tensor.from_list([1.0, 10.0, 100.0]))
    assert Tensor.to_flat_list(m) == [1.0, 20.0, 300.0, 4.0, 50.0, 600.0]
    {:ok, at} = Tensor.op("Transpose", [a])
    {:ok, p} = Tensor.matmul(a, at)
    assert Tensor.shape(p) == {2, 2} and Tensor.to_flat_list(p) == [14.0, 32.0, 32.0, 77.0]
    {:ok, sm} = Tensor.op("Softmax", [a], axis: -1)
    for {row, got} <- Enum.zip([[1, 2, 3], [4, 5, 6]], Enum.chunk_every(Tensor.to_flat_list(sm), 3)) do
      e = Enum.map(row, &:math.exp(&1 - Enum.max(row)))
      for {g, w} <- Enum.zip(got, Enum.map(e, &(&1 / Enum.sum(e)))),
          do: assert(abs(g - w) <= 1.0e-6)
    end
    {:ok, sum} = Tensor.sum(a, [1])
    assert Tensor.to_flat_list(sum) == [6.0, 15.0]
    {:ok, [vals, idx]} = Tensor.op("TopK", [a, Tensor.from_list([1], {:s, 64})], [axis: 1], 2)
    assert Tensor.to_flat_list(vals) == [3.0, 6.0] and Tensor.to_flat_list(idx) == [2, 2]

    # the comparisons (Kernel's == < ... cannot be overloaded): elementwise,
    # bool ({:u, 8}) tensors, broadcasting; on device and binary tensors
    nan = <<0, 0, 192, 127>>
    cb = for(x <- [1.0, 5.0, 3.0], into: <<>>, do: <<x::float-32-native>>) <> nan
    c = Tensor.from_binary(cb, {:f, 32}, {4}, device: "cpu")
    d2 = Tensor.from_list([1.0, 2.0, 3.0, 4.0])
    for {f, want} <- [
          equal: [1, 0, 1, 0],
          not_equal: [0, 1, 0, 1],
          less: [0, 0, 0, 0],
          less_equal: [1, 0, 1, 0],
          greater: [0, 1, 0, 0],
          greater_equal: [1, 1, 1, 0]
        ] do
      {:ok, r} = apply(Tensor, f, [c, d2])
      assert Tensor.type(r) == {:u, 8} and Tensor.to_flat_list(r) == want, "#{f}"
      :ok = Tensor.free(r)
      {:ok, rb} = apply(Tensor, f, [Tensor.from_binary(cb, {:f, 32}, {4}), d2])
      assert Tensor.to_flat_list(rb) == want, "#{f} of binary tensors"
    end
    {:ok, self_ne} = Tensor.not_equal(c, c)
    assert Tensor.to_flat_list(self_ne) == [0, 0, 0, 1]
    {:ok, bc} = Tensor.less(a, Tensor.from_list([2.0, 5.0, 5.0]))
    assert Tensor.shape(bc) == {2, 3} and Tensor.to_flat_list(bc) == [1, 1, 1, 0, 0, 0]
    for x <- [c, self_ne, bc], do: :ok = Tensor.free(x)

    # a shape mismatch names the op and both shapes
    assert {:error, %Error{code: :invalid_argument, op: "MatMul", reason: r, details: d}} =
             Tensor.matmul(a, a)
    assert r =~ "shape mismatch" and d =~ "[2,3]"
    # a shape rule's check names the op and the device it ran on (not the
    # CPU rule's label, rt.cpu.ArgMax)
    assert {:error, %Error{code: :invalid_argument, op: "ArgMax", reason: r}} =
             Tensor.argmax(a, 5)
    assert r =~ "axis out of range" and r =~ "(on cpu)"

    # use after free: an error, never a crash
    assert :ok = Tensor.free(a)
    assert {:error, %Error{code: :failed_precondition, reason: "use after free"}} = Tensor.free(a)
    assert_raise Error, ~r/use after free/, fn -> Tensor.to_binary(a) end
    assert {:error, %Error{reason: "use after free"}} = Tensor.add(a, s)
    # binary tensors have nothing to free
    assert :ok = Tensor.free(Tensor.from_list([1.0]))

    {:ok, during} = Tensor.device_memory("cpu")
    assert elem(during, 0) > elem(before, 0)
    for x <- [t, z, o, f, s, m, at, p, sm, sum, vals, idx], do: assert(:ok = Tensor.free(x))
    assert {:ok, ^before} = Tensor.device_memory("cpu")

    # the garbage collector frees what is dropped
    pid = spawn(fn -> Tensor.ones({1000}) end)
    ref = Process.monitor(pid)
    assert_receive {:DOWN, ^ref, _, _, _}
    :erlang.garbage_collect()
    assert {:ok, ^before} = Tensor.device_memory("cpu")

    assert_raise Error, ~r/no such device/, fn -> Tensor.zeros({2}, {:f, 32}, device: "tpu") end
    assert_raise Error, ~r/dim/, fn -> Tensor.zeros({2, -1}) end
  end

  @tag :vulkan
  test "Vulkan: run on device tensors in and out, no host bytes (transfer counters)", ctx do
    if Enum.any?(Dmlc.devices(), &String.starts_with?(&1.id, "vulkan")) do
      m = Dmlc.compile!(model("fashion_mlp.onnx"), targets: "cpu,vulkan")
      x = rows(ctx.vx, 0, 8)
      {:ok, %{"logits" => ref}} = Dmlc.run(m, %{"input" => x})
      {:ok, before} = Tensor.device_memory("vulkan")
      xv = Tensor.to_device(x, "vulkan")

      # device tensor in, device tensor out: the session on that device
      for _ <- 1..2 do
        %{"logits" => yv} = Dmlc.run!(m, %{"input" => xv}, device: "vulkan", outputs: :device)
        assert is_reference(yv.ref) and Tensor.device(yv) == "vulkan"
        assert yv.shape == ref.shape

        assert max_abs_diff(Tensor.from_binary(Tensor.to_binary(yv), {:f, 32}, yv.shape), ref) <
                 1.0e-4

        :ok = Tensor.free(yv)
      end

      s = Dmlc.transfer_stats!(m, "vulkan")
      IO.puts("device-resident runs on vulkan: #{inspect(s)}")
      in_bytes = 8 * 784 * 4
      out_bytes = 8 * 10 * 4
      assert s.to_device_bytes == 0 and s.to_host_bytes == 0
      assert s.on_device_bytes == 2 * (in_bytes + out_bytes) and s.on_device_count == 4

      # a device tensor in, host tensors out: only the outputs come to the host
      %{"logits" => yh} = Dmlc.run!(m, %{"input" => xv}, device: "vulkan")
      assert yh.ref == nil and max_abs_diff(yh, ref) < 1.0e-4
      s2 = Dmlc.transfer_stats!(m, "vulkan")
      assert s2.to_device_bytes == 0 and s2.to_host_bytes == out_bytes

      # a host tensor in, a device tensor out
      %{"logits" => yd} = Dmlc.run!(m, %{"input" => x}, device: "vulkan", outputs: :device)
      assert Tensor.device(yd) == "vulkan"
      assert Dmlc.transfer_stats!(m, "vulkan").to_device_bytes == in_bytes
      :ok = Tensor.free(yd)

      # errors: an unknown input name, a freed tensor
      assert {:error, %Error{code: :not_found}} =
               Dmlc.run(m, %{"nope" => xv}, device: "vulkan", outputs: :device)

      :ok = Tensor.free(xv)

      assert {:error, %Error{code: :failed_precondition}} =
               Dmlc.run(m, %{"input" => xv}, device: "vulkan", outputs: :device)

      assert {:ok, ^before} = Tensor.device_memory("vulkan")
      :ok = Dmlc.free(m)
    else
      IO.puts("skipped: no Vulkan device")
    end
  end

  test "device tensors on Vulkan: copies, and ops equal to the CPU or a clear error" do
    if Enum.any?(Dmlc.devices(), &String.starts_with?(&1.id, "vulkan")) do
      {:ok, before} = Tensor.device_memory("vulkan")
      bin = for x <- [1.5, -2.0, 0.0, 3.25], into: <<>>, do: <<x::float-32-native>>
      t = Tensor.from_binary(bin, {:f, 32}, {2, 2}, device: "vulkan")
      assert Tensor.device(t) == "vulkan" and Tensor.to_binary(t) == bin
      c = Tensor.to_device(t, "cpu")
      assert Tensor.to_binary(c) == bin

      case Tensor.add(t, t) do
        {:ok, y} ->
          assert Tensor.to_flat_list(y) == [3.0, -4.0, 0.0, 6.5]
          :ok = Tensor.free(y)

        {:error, %Error{code: :unimplemented} = e} ->
          assert Exception.message(e) =~ "Add"
      end

      # the shape rule's errors name the op and the device
      assert {:error, %Error{code: :invalid_argument, op: "ArgMax", reason: r}} =
               Tensor.argmax(t, 5)
      assert r =~ "axis out of range" and r =~ "(on vulkan"
      # the comparisons on the device: bool tensors there
      {:ok, ne} = Tensor.not_equal(t, t)
      {:ok, gt} = Tensor.greater(t, Tensor.from_list([1.0, -3.0]))
      assert Tensor.device(ne) == "vulkan" and Tensor.to_flat_list(ne) == [0, 0, 0, 0]
      assert Tensor.type(gt) == {:u, 8} and Tensor.to_flat_list(gt) == [1, 1, 0, 1]
      for x <- [ne, gt], do: :ok = Tensor.free(x)

      :ok = Tensor.free(t)
      :ok = Tensor.free(c)
      assert {:ok, ^before} = Tensor.device_memory("vulkan")
    end
  end
end
