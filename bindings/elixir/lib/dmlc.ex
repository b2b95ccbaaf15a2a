defmodule Dmlc do
  @moduledoc """
  dmlc for Elixir: compile ONNX models ahead of time into packages, train
  them, run them and serve them, through dmlc's C libraries (a NIF;
  docs/elixir.md).

      {:ok, model} = Dmlc.compile("fashion_mlp_untrained.onnx",
                                  loss: :cross_entropy, optimizer: :adam, learning_rate: 1.0e-3)
      {:ok, history} = Dmlc.fit(model, {x, y}, epochs: 3, batch_size: 32,
                                validation_data: {vx, vy},
                                callbacks: [Dmlc.Callback.early_stopping(patience: 2)])
      {:ok, %{loss: _, accuracy: _}} = Dmlc.evaluate(model, {vx, vy})
      {:ok, logits} = Dmlc.predict(model, x)
      :ok = Dmlc.save(model, "trained.dmlpkg")

  Tensors are `%Dmlc.Tensor{}` (a binary in Nx's layout, a shape tuple, an
  Nx type tuple).

  Errors: every function returns `{:ok, value}` (or `:ok`) or `{:error,
  %Dmlc.Error{}}` (code, op, reason, details); the `!` variants return the
  value or raise the `Dmlc.Error`.

  Devices: `"cpu"`, `"vulkan"`, `"vulkan:N"`, `"cuda"`, `"cuda:N"` (the
  package must hold kernels for the device's target: compile with
  `targets: "cpu,vulkan"`). `:device` defaults to `default_device/0`.

  Resources: a compiled model holds native memory (the package, a trainer
  and sessions) freed when the model is garbage collected, or at once by
  `free/1`; using a freed model is an error (`:failed_precondition`, "use
  after free"), never a crash. Calls on one model are serialized; calls on
  different models run in parallel. Long calls run on dirty CPU schedulers.
  """

  alias Dmlc.{Error, NIF, Tensor}

  defmodule Model do
    @moduledoc """
    A compiled model (a loaded `.dmlpkg`). `:ref` is the native resource;
    `:inputs` and `:outputs` describe the `forward` function (`%{name:,
    dtype:, shape:, bounds:, type:}`, symbolic dims as strings such as
    `"batch"`); `:trainable` is true for a training package (compiled with
    a loss and an optimizer); `:learning_rate` is the default of `Dmlc.fit/3`.
    """
    defstruct [:ref, inputs: [], outputs: [], functions: [], trainable: false, learning_rate: nil]

    @type t :: %__MODULE__{}
  end

  # ---------------------------------------------------------------------
  # Availability and devices
  # ---------------------------------------------------------------------

  @doc "True when the NIF is loaded (the package was built against dmlc)."
  def available?, do: NIF.load_error() == nil

  @doc """
  The devices sessions can run on, as `dmlc devices` lists them: maps with
  `:id` (what `:device` takes: `"cpu"`, `"vulkan:0"`, `"cuda:0"`), `:name`,
  `:kind` (`"CPU"`, `"discrete GPU"`, `"integrated GPU"`, `"virtual GPU"`,
  `"CUDA GPU"`; Mesa's lavapipe is a Vulkan device of kind `"CPU"`),
  `:memory_bytes` and `:default`. GPUs whose driver or device is absent are
  left out.
  """
  def devices do
    cpu = %{id: "cpu", name: "cpu", kind: "CPU", memory_bytes: 0, default: true}

    gpus =
      for kind <- ["vulkan", "cuda"],
          {:ok, list} <- [NIF.gpu_devices(kind)],
          d <- list,
          do: d

    [cpu | gpus]
  end

  @doc "True when a GPU (a Vulkan device that is not a CPU implementation, or a CUDA device) is present."
  def gpu?,
    do:
      Enum.any?(
        devices(),
        &(&1.kind in ["discrete GPU", "integrated GPU", "virtual GPU", "CUDA GPU"])
      )

  @doc """
  The device used when a call gives no `:device`: the application
  environment's `config :dmlc, default_device: "vulkan"`, else `"cpu"`
  (packages hold CPU code always, GPU kernels only when compiled for them).
  """
  def default_device, do: Application.get_env(:dmlc, :default_device, "cpu")

  @doc "The targets this build compiles for, in words (\"cpu, vulkan, metal, cuda\")."
  def available_targets, do: NIF.available_targets()

  # ---------------------------------------------------------------------
  # Compile, load, save, free
  # ---------------------------------------------------------------------

  @train_keys [
    :loss,
    :optimizer,
    :output,
    :momentum,
    :beta1,
    :beta2,
    :epsilon,
    :alpha,
    :weight_decay,
    :clip_norm,
    :clip_value,
    :label_smoothing,
    :huber_delta,
    :soft_targets
  ]

  @doc """
  Compiles an ONNX model (a path, or the model's bytes) into a package held
  in memory (what `dmlc compile` / `dmlc train`'s compile step do).

  Options:
    * `:targets` — `"cpu"` (default), `"cpu,vulkan"`, ... (a list works too).
    * `:batch_bound` — bound of every symbolic dim not otherwise bounded (default 64).
    * `:dim_bounds` — bound per symbol name, `%{"H" => 1280}`, or an integer
      for every other symbolic dim (`dmlc compile --dim-bound`).
    * `:input_shapes` — per input a shape replacing the declared one, as
      `--input-shape` spells it (`"1x3x[32:640]x[32:1280:32]"`), or a tuple
      of integers (static) and `{min, max}` / `{min, max, step}` (symbolic
      with those bounds).
    * `:dynamic_dim_bound`, `:dynamic_max_elements` — bounds of value-dependent
      dims and of the elements of such values; `:cuda_arch`, `:allow_tf32` —
      the cuda target's (`dmlc compile --help`).
    * `:loss` — makes a training package (train_step, eval_step): `:cross_entropy`,
      `:nll`, `:bce_with_logits`, `:bce`, `:mse`, `:mae`, `:huber`.
    * `:optimizer` — `:sgd`, `:momentum`, `:nesterov`, `:adam` (default with a loss),
      `:adamw`, `:rmsprop`, `:adagrad`; with `:momentum`, `:beta1`, `:beta2`,
      `:epsilon`, `:alpha`, `:weight_decay` (torch.optim's meanings).
    * `:clip_norm`, `:clip_value` — gradient clipping compiled in.
    * `:learning_rate` — the default learning rate of `fit/3` (1.0e-3).
    * `:output`, `:label_smoothing`, `:huber_delta`, `:soft_targets` — as
      passes/dml_train.h.

  Errors: `:unimplemented` listing every unsupported op, `:invalid_argument`
  for a bad option, `:not_found` for a missing file, `:data_loss` for bytes that
  are not ONNX.
  """
  def compile(model, opts \\ []) do
    with {:ok, bytes, base_dir, source} <- read_model(model) do
      targets =
        case Keyword.get(opts, :targets, Keyword.get(opts, :target, "cpu")) do
          l when is_list(l) -> Enum.map_join(l, ",", &to_string/1)
          t -> to_string(t)
        end

      train =
        if Keyword.has_key?(opts, :loss) or Keyword.has_key?(opts, :optimizer) do
          opts
          |> Keyword.take(@train_keys)
          |> Map.new(fn
            {k, v} when k in [:loss, :optimizer, :output] -> {k, to_string(v)}
            kv -> kv
          end)
        end

      nopts =
        Map.merge(
          %{targets: targets, batch_bound: opts[:batch_bound], train: train},
          Map.new(
            Keyword.take(opts, [
              :dynamic_dim_bound,
              :dynamic_max_elements,
              :cuda_arch,
              :allow_tf32
            ])
          )
        )

      with {:ok, specs} <- convert("elixir.compile", fn -> dim_specs(opts) end),
           {:ok, ref} <-
             NIF.compile_onnx(bytes, base_dir, source, Map.merge(nopts, specs)) |> Error.wrap() do
        model(ref, opts[:learning_rate])
      end
    end
  end

  # :dim_bounds and :input_shapes as dmlc compile's --dim-bound / --input-shape values.
  defp dim_specs(opts) do
    bounds =
      case opts[:dim_bounds] do
        nil -> []
        n when is_integer(n) -> [Integer.to_string(n)]
        m when is_map(m) or is_list(m) -> [Enum.map_join(m, ",", fn {k, v} -> "#{k}=#{v}" end)]
      end

    shapes =
      for {name, shape} <- opts[:input_shapes] || [] do
        dims =
          case shape do
            s when is_binary(s) ->
              s

            t when is_tuple(t) ->
              t
              |> Tuple.to_list()
              |> Enum.map_join("x", fn
                d when is_integer(d) -> Integer.to_string(d)
                {lo, hi} -> "[#{lo}:#{hi}]"
                {lo, hi, step} -> "[#{lo}:#{hi}:#{step}]"
              end)
          end

        "#{name}=#{dims}"
      end

    %{dim_bounds: bounds, input_shapes: shapes}
  end

  defp read_model(model) when is_binary(model) do
    cond do
      byte_size(model) < 4096 and String.printable?(model) ->
        case File.read(model) do
          {:ok, bytes} ->
            {:ok, bytes, Path.dirname(Path.expand(model)), model}

          {:error, reason} ->
            {:error,
             Error.new(
               if(reason == :enoent, do: :not_found, else: :io),
               "elixir.compile",
               "cannot read '#{model}': #{:file.format_error(reason)}"
             )}
        end

      true ->
        {:ok, model, "", ""}
    end
  end

  defp read_model(other),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "elixir.compile",
         "model must be a path or the ONNX bytes, not #{inspect(other, limit: 3)}"
       )}

  defp model(ref, lr) do
    with {:ok, info} <- NIF.info(ref) |> Error.wrap() do
      {:ok,
       %Model{
         ref: ref,
         inputs: info.inputs,
         outputs: info.outputs,
         functions: info.functions,
         trainable: info.trainable,
         learning_rate: lr
       }}
    end
  end

  @doc """
  Loads a package: a `.dmlpkg` path or its bytes (every section's CRC and
  the graph verified). Errors: `:not_found` / `:io`, `:data_loss` (the
  section and offset named), `:unimplemented` (a newer format or an op this
  build lacks).
  """
  def load(path_or_bytes) when is_binary(path_or_bytes) do
    bytes =
      if byte_size(path_or_bytes) < 4096 and String.printable?(path_or_bytes) do
        case File.read(path_or_bytes) do
          {:ok, b} ->
            b

          {:error, r} ->
            {:error,
             Error.new(
               if(r == :enoent, do: :not_found, else: :io),
               "elixir.load",
               "cannot read '#{path_or_bytes}': #{:file.format_error(r)}"
             )}
        end
      else
        path_or_bytes
      end

    case bytes do
      {:error, _} = e -> e
      b -> with {:ok, ref} <- NIF.load_bytes(b) |> Error.wrap(), do: model(ref, nil)
    end
  end

  @doc """
  Writes the package to `path` atomically; a training package with its
  current (trained) parameters and optimizer state.
  """
  def save(%Model{ref: ref}, path), do: NIF.save(ref, to_string(path)) |> Error.wrap()

  @doc """
  Frees the model's native memory now (else the garbage collector does).
  Later calls with it return `{:error, %Dmlc.Error{code: :failed_precondition,
  reason: "use after free"}}`. A `Dmlc.Serving` running the model keeps
  what it needs until it stops.
  """
  def free(%Model{ref: ref}), do: NIF.model_free(ref) |> Error.wrap()

  @doc """
  The package's facts: `:inputs`, `:outputs`, `:functions`, `:symbols`
  (`[{name, bound}]`), `:nodes` (`[{name, op}]` in execution order),
  `:param_count`, `:const_count`, `:weights_bytes`, `:arena_bytes`,
  `:scratch_bytes`, `:package_bytes`, `:meta`, `:trainable`.
  """
  def info(%Model{ref: ref}), do: NIF.info(ref) |> Error.wrap()

  @doc """
  A summary table as a string (as `dmlc summary`): inputs, outputs, the nodes
  by op, parameter count and sizes. `{:error, e}` for a freed model.
  """
  def summary(%Model{} = m) do
    with {:ok, i} <- info(m) do
      io = fn l -> Enum.map_join(l, "\n", &"  #{&1.name}: #{&1.type}") end

      ops =
        i.nodes
        |> Enum.frequencies_by(&elem(&1, 1))
        |> Enum.sort_by(fn {op, n} -> {-n, op} end)
        |> Enum.map_join("\n", fn {op, n} -> "  #{String.pad_trailing(op, 24)} #{n}" end)

      {:ok,
       """
       inputs:
       #{io.(i.inputs)}
       outputs:
       #{io.(i.outputs)}
       functions: #{Enum.join(i.functions, ", ")}
       nodes (forward): #{length(i.nodes)}
       #{ops}
       parameters: #{i.param_count} (#{i.weights_bytes} bytes of weights), planned arena #{i.arena_bytes} bytes
       """}
    end
  end

  # ---------------------------------------------------------------------
  # Inference
  # ---------------------------------------------------------------------

  @doc """
  One run of `forward` on `inputs` (a map of input name => `%Dmlc.Tensor{}`;
  each symbolic dim within its bound). Returns `{:ok, %{output name =>
  tensor}}`. Options: `:device`, `:outputs` (`:host`, the default, or
  `:device`).

  Device tensors among the inputs (made by `Dmlc.Tensor` on `"vulkan"`,
  `"cuda"`, ...), or `outputs: :device`, run the model's session opened on
  that eager device (`dml_rt_session_create_on_device`; one per model and
  device): a device tensor on the run's `:device` is copied into the session
  on the device, never through the host, and with `outputs: :device` each
  output is a new device tensor there (free it with `Dmlc.Tensor.free/1`);
  `transfer_stats/2` counts the bytes. Training packages (with
  `train_step`) take host tensors only.
  """
  def run(model, inputs, opts \\ [])

  def run(%Model{ref: ref}, inputs, opts) do
    on_dev = Keyword.get(opts, :outputs, :host) == :device

    if on_dev or device_inputs?(inputs) do
      with {:ok, ins} <- convert("elixir.run", fn -> device_inputs(inputs) end),
           {:ok, outs} <- NIF.run_device(ref, device(opts), ins, on_dev) |> Error.wrap() do
        {:ok, Map.new(outs, fn {k, t} -> {k, Tensor.from_nif(t)} end)}
      end
    else
      with {:ok, ins} <- convert("elixir.run", fn -> named_inputs(inputs) end),
           {:ok, outs} <- NIF.run(ref, device(opts), ins) |> Error.wrap() do
        {:ok, Map.new(outs, fn {k, t} -> {k, Tensor.from_nif(t)} end)}
      end
    end
  end

  @doc """
  The bytes and copies of inputs and outputs that the model's session on
  eager device `device` (`run/3` with device tensors or `outputs: :device`)
  moved since it was made: `{:ok, %{to_device_bytes:, to_device_count:,
  to_host_bytes:, to_host_count:, on_device_bytes:, on_device_count:}}`
  (host to device, device to host, on the device; all 0 before its first
  run).
  """
  def transfer_stats(%Model{ref: ref}, device),
    do: NIF.transfer_stats(ref, to_string(device)) |> Error.wrap()

  @doc """
  `forward` on every row of `x` (the model's one input; any number of rows:
  run in chunks of the batch bound), with the current parameters of a
  trained model. Options: `:device`, `:output` (an output's name or index,
  default the first).
  """
  def predict(%Model{ref: ref} = m, x, opts \\ []) do
    with {:ok, oi} <- output_index(m, Keyword.get(opts, :output, 0)),
         {:ok, tx} <- convert("elixir.predict", fn -> Tensor.to_nif(x) end),
         {:ok, y} <- NIF.predict(ref, device(opts), tx, oi) |> Error.wrap() do
      {:ok, Tensor.from_nif(y)}
    end
  end

  defp output_index(_m, i) when is_integer(i), do: {:ok, i}

  defp output_index(%Model{outputs: outs}, name) do
    case Enum.find_index(outs, &(&1.name == to_string(name))) do
      nil ->
        {:error,
         Error.new(
           :not_found,
           "elixir.predict",
           "no output '#{name}'",
           "outputs: " <> Enum.map_join(outs, ", ", & &1.name)
         )}

      i ->
        {:ok, i}
    end
  end

  @doc """
  Times `run/3` on `inputs`: `{:ok, %{min:, median:, mean:, max:, iterations:,
  device:}}` in milliseconds per run (binding the inputs and running;
  wall clock). Options: `:device`, `:iterations` (100), `:warmup` (10).
  """
  def benchmark(%Model{ref: ref}, inputs, opts \\ []) do
    with {:ok, ins} <- convert("elixir.benchmark", fn -> named_inputs(inputs) end) do
      bench(ref, ins, opts)
    end
  end

  defp bench(ref, ins, opts) do
    NIF.benchmark(
      ref,
      device(opts),
      ins,
      Keyword.get(opts, :iterations, 100),
      Keyword.get(opts, :warmup, 10)
    )
    |> Error.wrap()
  end

  @doc """
  Checks the package's GPU kernels on `device` (`"vulkan"`, `"cuda"`, ...):
  each kernel alone against the CPU reference kernels on random and edge
  inputs (NaN, infinities, -0, denormals, huge and tiny values), then the
  whole function end to end (what `dmlc check` does; `dml_rt_check` in
  runtime/dml_rt.h states the error measure and tolerances). For an app's
  first launch on an unknown GPU. Returns `{:ok, %{device:, n_failed:, seed:,
  iterations:, kernels: [%{name:, ops:, tol_class:, tolerance:, checked:,
  passed:, worst:, value:, index:, device_value:, cpu_value:, inputs:,
  iteration:, note:}]}}` (a wrong kernel is `n_failed > 0`, not an error).
  Options: `:seed` (0), `:iterations` (3). Errors: `:invalid_argument` for
  `"cpu"` (the reference itself), a device a session cannot be made on.
  """
  def check(%Model{ref: ref}, device, opts \\ []) do
    NIF.check(
      ref,
      to_string(device),
      Keyword.get(opts, :seed, 0),
      Keyword.get(opts, :iterations, 3)
    )
    |> Error.wrap()
  end

  # ---------------------------------------------------------------------
  # Training
  # ---------------------------------------------------------------------

  @doc """
  Trains a training package (see `compile/2`) on `{x, y}`: x `[N, ...]` of
  the model input's type, y `[N]` `{:s, 64}` class indices (cross-entropy,
  nll) or targets of the output's shape. Training continues from where the
  last fit stopped. Returns `{:ok, history}`:

      %{epochs: [%{epoch: 1, loss: 0.52, accuracy: 0.81, val_loss: ..., val_accuracy: ...,
                   lr: 0.001, seconds: 0.4, samples_per_second: ..., step: 94, epochs: 3}, ...],
        loss: [...], accuracy: [...], val_loss: [...], val_accuracy: [...], lr: [...],
        stopped_early: false, best_epoch: 0, restored: false, validation: "validation"}

  Metrics that do not exist (no validation data) are `:nan`.

  Options:
    * `:epochs` (10), `:batch_size` (32), `:shuffle` (true), `:seed` (0).
    * `:learning_rate` — the initial rate (default the one given to
      `compile/2`, else 1.0e-3).
    * `:lr_schedule` — `:constant` (default), `{:step, every, factor}`,
      `{:exponential, rate}`, `{:cosine, minimum}` / `{:cosine, minimum, warmup}`,
      `{:plateau, factor, patience}` / `{:plateau, factor, patience, min_lr}`
      (torch.optim.lr_scheduler's formulas, runtime/train/dml_trainer.h).
    * `:validation_data` — `{vx, vy}`; else `:validation_split` (0.0 unless
      given: the last rows validate).
    * `:clip_norm`, `:clip_value`, `:momentum`, `:beta1`, `:beta2`,
      `:epsilon`, `:alpha`, `:weight_decay` — set the package's
      hyper-parameters before the first step (a package has those its
      optimizer and clipping were compiled with: `:failed_precondition`
      otherwise).
    * `:callbacks` — a list of `Dmlc.Callback` values: `logger/1`,
      `early_stopping/1`, `checkpoint/2`, `progress/2`, `on_epoch/1`.
    * `:device`.
  """
  def fit(%Model{} = m, data, opts \\ []) do
    callbacks = Keyword.get(opts, :callbacks, [])

    with {:ok, {tx, ty}} <- convert("elixir.fit", fn -> xy(data) end),
         {:ok, nopts} <- convert("elixir.fit", fn -> fit_options(m, opts, callbacks) end),
         {:ok, nopts} <- nopts do
      ctl = NIF.fit_control()
      tag = make_ref()
      caller = self()
      dev = device(opts)
      task = Task.async(fn -> NIF.fit(m.ref, dev, tx, ty, nopts, ctl, caller, tag) end)

      case fit_loop(task, ctl, tag, callbacks) |> Error.wrap() do
        {:ok, h} -> {:ok, history(h)}
        err -> err
      end
    end
  end

  @doc "As `fit/3` with `Dmlc.Callback.logger/1` added: one line per epoch through Logger; returns the history."
  def fit_with_progress(%Model{} = m, data, opts \\ []) do
    fit(
      m,
      data,
      Keyword.update(opts, :callbacks, [Dmlc.Callback.logger()], &[Dmlc.Callback.logger() | &1])
    )
  end

  defp fit_options(m, opts, callbacks) do
    lr = opts[:learning_rate] || m.learning_rate || 1.0e-3

    with {:ok, sched} <- lr_schedule(Keyword.get(opts, :lr_schedule, :constant), lr) do
      base =
        %{
          epochs: opts[:epochs],
          batch_size: opts[:batch_size],
          shuffle: Keyword.get(opts, :shuffle, true),
          seed: opts[:seed],
          lr_schedule: sched,
          validation_split: Keyword.get(opts, :validation_split, 0.0),
          eval_batch_size: opts[:eval_batch_size],
          validation: if(opts[:validation_data], do: xy(opts[:validation_data]))
        }
        |> Map.merge(
          Map.new(
            Keyword.take(opts, [
              :momentum,
              :beta1,
              :beta2,
              :epsilon,
              :alpha,
              :weight_decay,
              :clip_norm,
              :clip_value
            ])
          )
        )

      {:ok, Enum.reduce(callbacks, base, &Dmlc.Callback.native_options/2)}
    end
  end

  defp lr_schedule(:constant, lr), do: {:ok, "constant:#{fmt(lr)}"}

  defp lr_schedule({:step, every, factor}, lr),
    do: {:ok, "step:#{fmt(lr)},#{every},#{fmt(factor)}"}

  defp lr_schedule({:exponential, rate}, lr), do: {:ok, "exponential:#{fmt(lr)},#{fmt(rate)}"}
  defp lr_schedule({:cosine, min}, lr), do: {:ok, "cosine:#{fmt(lr)},#{fmt(min)}"}

  defp lr_schedule({:cosine, min, warmup}, lr),
    do: {:ok, "cosine:#{fmt(lr)},#{fmt(min)},#{warmup}"}

  defp lr_schedule({:plateau, f, p}, lr), do: {:ok, "plateau:#{fmt(lr)},#{fmt(f)},#{p}"}

  defp lr_schedule({:plateau, f, p, min}, lr),
    do: {:ok, "plateau:#{fmt(lr)},#{fmt(f)},#{p},#{fmt(min)}"}

  defp lr_schedule(s, _) when is_binary(s), do: {:ok, s}

  defp lr_schedule(other, _),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "elixir.fit",
         "unknown lr_schedule #{inspect(other)}",
         "use :constant, {:step, every, factor}, {:exponential, rate}, {:cosine, min[, warmup]}, {:plateau, factor, patience[, min_lr]}"
       )}

  defp fmt(x) when is_integer(x), do: Integer.to_string(x)
  defp fmt(x) when is_float(x), do: :erlang.float_to_binary(x, [:short])

  defp fit_loop(task, ctl, tag, callbacks) do
    ref = task.ref

    receive do
      {:dmlc_epoch, ^tag, metrics} ->
        halt =
          try do
            Dmlc.Callback.run_epoch(callbacks, metrics)
          catch
            kind, reason ->
              # Never leave the fit waiting: a failing callback stops it.
              NIF.fit_ack(ctl, metrics.epoch, true)
              :erlang.raise(kind, reason, __STACKTRACE__)
          end

        NIF.fit_ack(ctl, metrics.epoch, halt)
        fit_loop(task, ctl, tag, callbacks)

      {:dmlc_batch, ^tag, metrics} ->
        Dmlc.Callback.run_batch(callbacks, metrics)
        fit_loop(task, ctl, tag, callbacks)

      {^ref, result} ->
        Process.demonitor(ref, [:flush])
        result
    end
  end

  defp history(h) do
    cols =
      for k <- [:loss, :accuracy, :val_loss, :val_accuracy, :lr],
          into: %{},
          do: {k, Enum.map(h.epochs, & &1[k])}

    Map.merge(h, cols)
  end

  @doc """
  The mean loss and the accuracy of a training package on `{x, y}`
  (eval_step in batches): `{:ok, %{loss:, accuracy:}}` (`:nan` accuracy for
  losses without one). Options: `:batch_size` (the bound), `:device`.
  """
  def evaluate(%Model{ref: ref}, data, opts \\ []) do
    with {:ok, {tx, ty}} <- convert("elixir.evaluate", fn -> xy(data) end),
         {:ok, {loss, acc}} <-
           NIF.evaluate(ref, device(opts), tx, ty, Keyword.get(opts, :batch_size, 0))
           |> Error.wrap() do
      {:ok, %{loss: loss, accuracy: acc}}
    end
  end

  @doc """
  Writes a training package's parameters, optimizer state and epoch/step
  counters to `path` (safetensors, atomically; the format of
  `Dmlc.Callback.checkpoint/2`). Options: `:device`, `:seed` (recorded, 0).
  """
  def save_checkpoint(%Model{ref: ref}, path, opts \\ []),
    do:
      NIF.checkpoint(ref, device(opts), to_string(path), true, Keyword.get(opts, :seed, 0))
      |> Error.wrap()

  @doc """
  Restores a checkpoint (`save_checkpoint/3` or `Dmlc.Callback.checkpoint/2`
  of the same package): parameters, optimizer state and counters, so a
  later `fit/3` continues exactly as the run that wrote it would have.
  Errors: `:not_found` / `:io` / `:data_loss` reading it,
  `:failed_precondition` naming a missing, extra or mismatched tensor.
  Options: `:device`.
  """
  def load_checkpoint(%Model{ref: ref}, path, opts \\ []),
    do: NIF.checkpoint(ref, device(opts), to_string(path), false, 0) |> Error.wrap()

  defp device(opts), do: to_string(Keyword.get(opts, :device) || default_device())

  # Arguments converted for the NIF; a bad one is an :invalid_argument error.
  defp convert(op, fun) do
    {:ok, fun.()}
  rescue
    e in [ArgumentError, FunctionClauseError, KeyError, Protocol.UndefinedError] ->
      {:error, Error.new(:invalid_argument, op, Exception.message(e))}
  end

  defp device_inputs?(inputs) when is_map(inputs),
    do: Enum.any?(inputs, fn {_, t} -> match?(%Tensor{ref: r} when is_reference(r), t) end)

  defp device_inputs?(_), do: false

  # device tensors as their resources, the others as host tensors
  defp device_inputs(inputs) when is_map(inputs),
    do:
      Enum.map(inputs, fn
        {k, %Tensor{ref: r}} when is_reference(r) -> {to_string(k), r}
        {k, t} -> {to_string(k), Tensor.to_nif(t)}
      end)

  defp device_inputs(other), do: named_inputs(other)

  defp named_inputs(inputs) when is_map(inputs),
    do: Enum.map(inputs, fn {k, t} -> {to_string(k), Tensor.to_nif(t)} end)

  defp named_inputs(other),
    do:
      raise(
        ArgumentError,
        "inputs must be a map of input name => %Dmlc.Tensor{}, not #{inspect(other, limit: 3)}"
      )

  defp xy({x, y}), do: {Tensor.to_nif(x), Tensor.to_nif(y)}

  defp xy(other),
    do: raise(ArgumentError, "data must be {x, y} tensors, not #{inspect(other, limit: 3)}")

  # ---------------------------------------------------------------------
  # Bang variants
  # ---------------------------------------------------------------------

  for {name, arity} <- [
        compile: 1,
        compile: 2,
        load: 1,
        save: 2,
        free: 1,
        info: 1,
        summary: 1,
        run: 2,
        run: 3,
        transfer_stats: 2,
        predict: 2,
        predict: 3,
        benchmark: 2,
        benchmark: 3,
        fit: 2,
        fit: 3,
        fit_with_progress: 2,
        fit_with_progress: 3,
        evaluate: 2,
        evaluate: 3,
        save_checkpoint: 2,
        save_checkpoint: 3,
        load_checkpoint: 2,
        load_checkpoint: 3,
        check: 2,
        check: 3
      ] do
    args = Macro.generate_arguments(arity, __MODULE__)
    bang = :"#{name}!"

    @doc "As `#{name}/#{arity}`, returning the value or raising `Dmlc.Error`."
    def unquote(bang)(unquote_splicing(args)) do
      case unquote(name)(unquote_splicing(args)) do
        :ok -> :ok
        {:ok, v} -> v
        {:error, %Error{} = e} -> raise e
      end
    end
  end
end
