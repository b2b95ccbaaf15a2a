defmodule Dmlc.Serving do
  @moduledoc """
  A supervised process serving a model to many concurrent callers, batching
  their requests (dmlc's serving layer, runtime/serve/dml_serve.h, under a
  GenServer; docs/serving.md describes the batching).

      children = [
        {Dmlc.Serving, model: model, name: MyModel, batch_size: 32, batch_timeout: 2}
      ]
      Supervisor.start_link(children, strategy: :one_for_one)

      {:ok, %{"logits" => y}} = Dmlc.Serving.run(MyModel, %{"input" => x})

  Each request's rows (the leading, batch dim of every input) are queued;
  a worker runs up to `:batch_size` rows at once (default the package's
  bound), waiting at most `:batch_timeout` milliseconds (default 1) after
  the oldest queued request for others to fill the batch. A request larger
  than a batch is split and put together again; every reply holds exactly
  its request's rows, bit for bit what a run of that request alone gives.

  Options of `start_link/1`: `:model` (a `%Dmlc.Model{}`, required; the
  server keeps its native memory alive even after `Dmlc.free/1`), `:name`,
  `:batch_size`, `:batch_timeout` (ms), `:device` ("cpu"), `:instances`
  (sessions with a worker thread each, default 1). Stopping the server (or
  its supervisor) answers what is queued, then stops the workers. A trained
  model is served with its parameters as they are at start (a snapshot).
  """
  use GenServer

  alias Dmlc.{Error, NIF, Tensor}

  @doc "Starts the server (see the module doc for the options)."
  def start_link(opts) do
    {gen, opts} = Keyword.split(opts, [:name])
    GenServer.start_link(__MODULE__, opts, gen)
  end

  @doc """
  Runs `inputs` (a map of input name => `%Dmlc.Tensor{}`, each with the
  same number of rows; or one tensor for a one-input model) through the
  server: `{:ok, %{output name => tensor}}` or `{:error, %Dmlc.Error{}}`.
  """
  def run(server, inputs, timeout \\ 30_000), do: GenServer.call(server, {:run, inputs}, timeout)

  @doc "As `run/3`, raising `Dmlc.Error`."
  def run!(server, inputs, timeout \\ 30_000) do
    case run(server, inputs, timeout) do
      {:ok, v} -> v
      {:error, e} -> raise e
    end
  end

  @doc """
  Statistics since start: `:requests`, `:requests_failed`, `:rows`, `:runs`,
  `:mean_rows_per_run`, `:latency_ms_p50`, `:latency_ms_p99`,
  `:queue_ms_p50`, `:batch_size`.
  """
  def stats(server), do: GenServer.call(server, :stats)

  @impl true
  def init(opts) do
    model = Keyword.fetch!(opts, :model)
    device = to_string(Keyword.get(opts, :device) || Dmlc.default_device())
    Process.flag(:trap_exit, true)

    case NIF.serve_start(
           model.ref,
           device,
           Keyword.get(opts, :batch_size, 0),
           Keyword.get(opts, :batch_timeout, 1) * 1.0,
           Keyword.get(opts, :instances, 1)
         )
         |> Error.wrap() do
      {:ok, srv} ->
        {:ok,
         %{
           srv: srv,
           inputs: Enum.map(model.inputs, & &1.name),
           outputs: Enum.map(model.outputs, & &1.name),
           pending: %{}
         }}

      {:error, e} ->
        {:stop, e}
    end
  end

  @impl true
  def handle_call({:run, inputs}, from, st) do
    with {:ok, list} <- ordered(inputs, st.inputs),
         tag = make_ref(),
         :ok <- NIF.serve_submit(st.srv, list, self(), tag) |> Error.wrap() do
      {:noreply, put_in(st.pending[tag], from)}
    else
      {:error, _} = err -> {:reply, err, st}
    end
  end

  def handle_call(:stats, _from, st), do: {:reply, NIF.serve_stats(st.srv) |> Error.wrap(), st}

  @impl true
  def handle_info({:dmlc_serve, tag, result}, st) do
    {from, pending} = Map.pop(st.pending, tag)

    reply =
      case Error.wrap(result) do
        {:ok, outs} -> {:ok, Map.new(Enum.zip(st.outputs, Enum.map(outs, &Tensor.from_nif/1)))}
        err -> err
      end

    if from, do: GenServer.reply(from, reply)
    {:noreply, %{st | pending: pending}}
  end

  def handle_info(_other, st), do: {:noreply, st}

  @impl true
  def terminate(_reason, st) do
    NIF.serve_stop(st.srv)
    # The drained requests' replies are in the mailbox now.
    flush(st)
  end

  defp flush(st) do
    receive do
      {:dmlc_serve, _, _} = msg ->
        {:noreply, st} = handle_info(msg, st)
        flush(st)
    after
      0 -> :ok
    end
  end

  defp ordered(%Tensor{} = t, [_]), do: {:ok, [Tensor.to_nif(t)]}

  defp ordered(inputs, names) when is_map(inputs) do
    given = Map.new(inputs, fn {k, v} -> {to_string(k), v} end)

    case Enum.reject(names, &Map.has_key?(given, &1)) do
      [] ->
        extra = Map.keys(given) -- names

        if extra == [],
          do: {:ok, Enum.map(names, &Tensor.to_nif(given[&1]))},
          else:
            {:error,
             Error.new(
               :not_found,
               "elixir.serving",
               "unknown input(s) #{Enum.join(extra, ", ")}",
               "inputs: " <> Enum.join(names, ", ")
             )}

      missing ->
        {:error,
         Error.new(
           :invalid_argument,
           "elixir.serving",
           "missing input(s) #{Enum.join(missing, ", ")}",
           "inputs: " <> Enum.join(names, ", ")
         )}
    end
  rescue
    e in ArgumentError ->
      {:error, Error.new(:invalid_argument, "elixir.serving", Exception.message(e))}
  end

  defp ordered(_, names),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "elixir.serving",
         "inputs must be a map of input name => tensor",
         "inputs: " <> Enum.join(names, ", ")
       )}
end
