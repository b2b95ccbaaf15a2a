defmodule Dmlc.Npy do
  @moduledoc """
  NumPy `.npy` files (format 1.0/2.0/3.0, C order, little-endian) as
  `%Dmlc.Tensor{}`: what `dmlc run` reads and writes, and the reference data
  under `shared/models/*_io/`.
  """
  alias Dmlc.{Error, Tensor}

  @descr %{
    "<f4" => {:f, 32},
    "<f2" => {:f, 16},
    "<f8" => {:f, 64},
    "|i1" => {:s, 8},
    "<i2" => {:s, 16},
    "<i4" => {:s, 32},
    "<i8" => {:s, 64},
    "|u1" => {:u, 8},
    "<u2" => {:u, 16},
    "<u4" => {:u, 32},
    "<u8" => {:u, 64},
    "|b1" => {:u, 8}
  }

  @doc "Reads a `.npy` file: `{:ok, tensor}` or `{:error, %Dmlc.Error{}}`."
  def load(path) do
    with {:ok, bin} <- File.read(path) do
      parse(bin, path)
    else
      {:error, r} ->
        {:error, Error.new(:io, "elixir.npy", "cannot read '#{path}': #{:file.format_error(r)}")}
    end
  end

  defp parse(<<0x93, "NUMPY", major, _minor, rest::binary>>, path) do
    {hlen, rest} =
      case major do
        1 ->
          <<n::little-16, r::binary>> = rest
          {n, r}

        _ ->
          <<n::little-32, r::binary>> = rest
          {n, r}
      end

    <<header::binary-size(hlen), data::binary>> = rest

    with [_, descr] <- Regex.run(~r/'descr':\s*'([^']+)'/, header),
         [_, "False"] <- Regex.run(~r/'fortran_order':\s*(True|False)/, header),
         [_, dims] <- Regex.run(~r/'shape':\s*\(([^)]*)\)/, header),
         {:ok, type} <- Map.fetch(@descr, descr) do
      shape =
        dims
        |> String.split(",", trim: true)
        |> Enum.map(&String.to_integer(String.trim(&1)))
        |> List.to_tuple()

      # little-endian files on a little-endian machine (the only case dmlc writes)
      {:ok, Tensor.from_binary(data, type, shape)}
    else
      _ ->
        {:error,
         Error.new(
           :unimplemented,
           "elixir.npy",
           "'#{path}': only little-endian, C-order numeric .npy files are read"
         )}
    end
  end

  defp parse(_, path),
    do: {:error, Error.new(:data_loss, "elixir.npy", "'#{path}' is not a .npy file")}

  @doc "Writes `t` as a `.npy` file (format 1.0)."
  def save(%Tensor{} = t, path) do
    {descr, _} =
      Enum.find(@descr, fn {d, ty} -> ty == t.type and d != "|b1" end) ||
        raise ArgumentError, "no .npy dtype for #{inspect(t.type)}"

    dims = Tuple.to_list(t.shape)

    shape =
      case dims do
        [d] -> "(#{d},)"
        l -> "(" <> Enum.join(l, ", ") <> ")"
      end

    h = "{'descr': '#{descr}', 'fortran_order': False, 'shape': #{shape}, }"
    pad = 64 - rem(10 + byte_size(h) + 1, 64)
    h = h <> String.duplicate(" ", rem(pad, 64)) <> "\n"
    File.write(path, [<<0x93, "NUMPY", 1, 0, byte_size(h)::little-16>>, h, t.data])
  end
end
