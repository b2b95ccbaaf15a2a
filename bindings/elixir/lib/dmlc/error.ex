defmodule Dmlc.Error do
  @moduledoc """
  An error of dmlc: the `dml_status_t` of its C library (runtime/base/dml_status.h).

    * `:code` — the class, an atom: `:invalid_argument`, `:not_found`,
      `:unimplemented`, `:out_of_range`, `:data_loss`, `:resource_exhausted`,
      `:failed_precondition`, `:internal`, `:io`.
    * `:op` — the operation attempted, e.g. `"onnx.import"`, `"rt.run"`,
      `"train"`, or `"elixir.<call>"` for the binding's own checks.
    * `:reason` — one line saying what went wrong.
    * `:details` — further lines (node names, shapes, what to do), `""` when none.

  Functions return `{:error, %Dmlc.Error{}}`; their `!` variants raise it.
  """
  defexception code: :internal, op: "", reason: "", details: ""

  @type t :: %__MODULE__{code: atom, op: String.t(), reason: String.t(), details: String.t()}

  @impl true
  def message(%__MODULE__{op: op, reason: reason, details: details}) do
    head = if op == "", do: reason, else: "#{op}: #{reason}"

    if details in [nil, ""],
      do: head,
      else: head <> "\n  " <> String.replace(details, "\n", "\n  ")
  end

  @doc false
  def from_nif({code, op, reason, details}),
    do: %__MODULE__{code: code, op: op, reason: reason, details: details}

  @doc false
  def new(code, op, reason, details \\ ""),
    do: %__MODULE__{code: code, op: op, reason: reason, details: details}

  @doc false
  # {:ok, v} | {:error, nif_error} from the NIF -> {:ok, v} | {:error, %Dmlc.Error{}}.
  def wrap({:error, {code, op, reason, details}}),
    do: {:error, from_nif({code, op, reason, details})}

  def wrap(other), do: other
end
