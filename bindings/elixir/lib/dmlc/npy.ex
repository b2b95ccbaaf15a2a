defmodule Dmlc.Npy do
  @moduledoc """
  NumPy `.npy` files as `%Dmlc.Tensor{}`, read and written by dmlc's own
  reader and writer (runtime/base/dml_npy.h: versions 1.0-3.0 read, C
  order, little-endian; what `dmlc run` reads and writes, and the reference
  data under `shared/models/*_io/`). Bool arrays come out as `{:u, 8}`;
  bf16 has no NumPy dtype.
  """
  alias Dmlc.{Error, NIF, Tensor}

  @doc """
  Reads a `.npy` file: `{:ok, tensor}` or `{:error, %Dmlc.Error{}}`
  (`:data_loss` for malformed bytes, `:unimplemented` for Fortran order,
  big-endian or other dtypes, `:not_found` / `:io`).
  """
  def load(path) do
    with {:ok, t} <- NIF.npy_read(to_string(path)) |> Error.wrap(), do: {:ok, Tensor.from_nif(t)}
  end

  @doc "Writes `t` to `path` as a `.npy` file (atomically). `:ok` or `{:error, %Dmlc.Error{}}`."
  def save(t, path) do
    NIF.npy_write(to_string(path), Tensor.to_nif(t)) |> Error.wrap()
  rescue
    e in ArgumentError ->
      {:error, Error.new(:invalid_argument, "elixir.npy", Exception.message(e))}
  end
end
