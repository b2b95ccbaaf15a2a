defmodule Dmlc.Callback do
  @moduledoc """
  Callbacks of `Dmlc.fit/3` (its `:callbacks` option).

  Early stopping and checkpoints are done by dmlc's trainer itself
  (runtime/train/dml_trainer.h: Keras' EarlyStopping state machine,
  safetensors checkpoints), so they act exactly at the epoch's end. The
  others run in the process that called `fit/3`, after each epoch, while the
  trainer waits for them; they must not use the model being fitted (its
  calls then fail with `:failed_precondition`).

      callbacks: [
        Dmlc.Callback.logger(),
        Dmlc.Callback.early_stopping(monitor: :val_loss, patience: 3),
        Dmlc.Callback.checkpoint("ckpt", every: 1),
        Dmlc.Callback.progress(self()),
        Dmlc.Callback.on_epoch(fn m -> if m.val_accuracy > 0.9, do: :halt, else: :cont end)
      ]

  Epoch metrics are maps: `:epoch` (1-based), `:epochs`, `:step`, `:loss`,
  `:accuracy`, `:val_loss`, `:val_accuracy`, `:lr`, `:seconds`,
  `:samples_per_second`; a metric that does not exist is `:nan`.
  """
  require Logger

  @type t ::
          {:logger, Logger.level()}
          | {:early_stopping, keyword}
          | {:checkpoint, String.t(), pos_integer}
          | {:progress, pid, boolean}
          | {:on_epoch, (map -> :cont | :halt)}

  @doc "Logs one line per epoch through Logger at `level` (default `:info`)."
  def logger(opts \\ []), do: {:logger, Keyword.get(opts, :level, :info)}

  @doc """
  Stops training after `:patience` epochs (default 3) without an
  improvement of more than `:min_delta` (0.0) in `:monitor` (`:val_loss`
  when there is validation data, else `:loss`; or `:loss`, `:accuracy`,
  `:val_accuracy`); `:restore_best` (true) restores the best epoch's
  parameters. The history says `stopped_early`, `best_epoch`, `restored`.
  """
  def early_stopping(opts \\ []) do
    {:early_stopping,
     [
       patience: Keyword.get(opts, :patience, 3),
       min_delta: Keyword.get(opts, :min_delta, 0.0),
       monitor: to_string(Keyword.get(opts, :monitor, :auto)),
       restore_best: Keyword.get(opts, :restore_best, true)
     ]}
  end

  @doc """
  Writes every parameter and the optimizer state every `:every` epochs (1)
  into `dir/epoch-NNNN.safetensors` (the folder is made if missing).
  """
  def checkpoint(dir, opts \\ []), do: {:checkpoint, to_string(dir), Keyword.get(opts, :every, 1)}

  @doc """
  Sends `{:dmlc_progress, :epoch, metrics}` to `pid` after each epoch, and
  with `batches: true` also `{:dmlc_progress, :batch, %{epoch:, batch:,
  batches:, step:, rows:, loss:, lr:}}` after each training step.
  """
  def progress(pid, opts \\ []) when is_pid(pid),
    do: {:progress, pid, Keyword.get(opts, :batches, false)}

  @doc "Calls `fun.(metrics)` after each epoch; `:halt` stops training after it, anything else continues."
  def on_epoch(fun) when is_function(fun, 1), do: {:on_epoch, fun}

  @doc false
  # The fit options the trainer handles itself.
  def native_options({:early_stopping, o}, acc),
    do:
      Map.merge(acc, %{
        patience: o[:patience],
        min_delta: o[:min_delta] * 1.0,
        monitor: o[:monitor],
        restore_best: o[:restore_best]
      })

  def native_options({:checkpoint, dir, every}, acc),
    do: Map.merge(acc, %{checkpoint_dir: dir, checkpoint_every: every})

  def native_options({:progress, _pid, true}, acc), do: Map.put(acc, :batches, true)
  def native_options({kind, _}, acc) when kind in [:logger, :on_epoch], do: acc
  def native_options({:progress, _, _}, acc), do: acc

  def native_options(other, _acc),
    do: raise(ArgumentError, "unknown Dmlc callback #{inspect(other)}")

  @doc false
  # Runs the epoch callbacks; true when one asks to halt.
  def run_epoch(callbacks, m) do
    Enum.reduce(callbacks, false, fn
      {:logger, level}, halt ->
        Logger.log(level, line(m))
        halt

      {:progress, pid, _}, halt ->
        send(pid, {:dmlc_progress, :epoch, m})
        halt

      {:on_epoch, fun}, halt ->
        fun.(m) == :halt or halt

      _, halt ->
        halt
    end)
  end

  @doc false
  def run_batch(callbacks, m) do
    for {:progress, pid, true} <- callbacks, do: send(pid, {:dmlc_progress, :batch, m})
    :ok
  end

  defp line(m) do
    parts =
      for k <- [:loss, :accuracy, :val_loss, :val_accuracy, :lr], is_float(m[k]) do
        "#{k} #{:erlang.float_to_binary(m[k], decimals: 4)}"
      end

    "epoch #{m.epoch}/#{m.epochs}: " <>
      Enum.join(parts, ", ") <> " (#{:erlang.float_to_binary(m.seconds * 1.0, decimals: 2)} s)"
  end
end
