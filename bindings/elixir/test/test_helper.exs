# The tests need the shared/ folder (DMLC_SHARED_DIR, default the shared/
# beside the repository) and Debian's Fashion-MNIST; tests/elixir/
# test_elixir.sh sets the environment (DMLC_BIN: the dmlc command, for
# comparing with `dmlc run`; by default DMLC_PREFIX's or DMLC_BUILD_DIR's).
ExUnit.start(capture_log: true)

defmodule Dmlc.TestData do
  @moduledoc false
  @fashion "/usr/share/datasets/fashion-mnist"

  def shared, do: System.get_env("DMLC_SHARED_DIR") || Path.expand("../../../../shared", __DIR__)

  # The dmlc command: DMLC_BIN, else the one of DMLC_PREFIX or DMLC_BUILD_DIR, else PATH's.
  def dmlc_bin do
    System.get_env("DMLC_BIN") ||
      Enum.find_value(
        [{"DMLC_PREFIX", "bin/dmlc"}, {"DMLC_BUILD_DIR", "compiler/dmlc"}],
        "dmlc",
        fn {var, rel} ->
          dir = System.get_env(var)
          dir && Path.expand(rel, dir)
        end
      )
  end

  def model(name), do: Path.join([shared(), "models", name])

  def tmp(name) do
    dir = System.get_env("TEST_TMPDIR") || System.tmp_dir!()
    Path.join(dir, name)
  end

  # `n` rows of a Fashion-MNIST split from `offset`: x f32 [n, 784] (bytes
  # / 255, as dmlc train reads IDX images), y s64 [n].
  def fashion(split, offset, n) do
    prefix = if split == :train, do: "train", else: "t10k"

    <<_::binary-16, img::binary>> =
      :zlib.gunzip(File.read!(Path.join(@fashion, "#{prefix}-images-idx3-ubyte.gz")))

    <<_::binary-8, lab::binary>> =
      :zlib.gunzip(File.read!(Path.join(@fashion, "#{prefix}-labels-idx1-ubyte.gz")))

    pix = binary_part(img, offset * 784, n * 784)
    x = for <<b <- pix>>, into: <<>>, do: <<b / 255::float-32-native>>
    y = for <<b <- binary_part(lab, offset, n)>>, into: <<>>, do: <<b::signed-64-native>>
    {Dmlc.Tensor.from_binary(x, {:f, 32}, {n, 784}), Dmlc.Tensor.from_binary(y, {:s, 64}, {n})}
  end

  def rows(%Dmlc.Tensor{shape: shape, type: type, data: d}, from, n) do
    row = div(byte_size(d), elem(shape, 0))
    Dmlc.Tensor.from_binary(binary_part(d, from * row, n * row), type, put_elem(shape, 0, n))
  end

  def floats(t), do: Dmlc.Tensor.to_flat_list(t)

  def max_abs_diff(a, b),
    do: Enum.zip(floats(a), floats(b)) |> Enum.map(fn {x, y} -> abs(x - y) end) |> Enum.max()
end

# A stand-in for the five functions of Nx that Dmlc.Tensor.from_nx/1 and
# to_nx/1 call (Nx cannot be installed here: no Hex), with Nx's signatures.
unless Code.ensure_loaded?(Nx) do
  defmodule Nx.Tensor do
    @moduledoc false
    defstruct [:data, :type, :shape]
  end

  defmodule Nx do
    @moduledoc false
    def to_binary(%Nx.Tensor{data: d}), do: d
    def type(%Nx.Tensor{type: t}), do: t
    def shape(%Nx.Tensor{shape: s}), do: s

    def from_binary(d, type),
      do: %Nx.Tensor{data: d, type: type, shape: {div(byte_size(d), div(elem(type, 1), 8))}}

    def reshape(%Nx.Tensor{} = t, shape), do: %{t | shape: shape}
  end
end
