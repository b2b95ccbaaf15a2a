defmodule Dmlc.Tensor do
  @moduledoc """
  A tensor as it crosses into and out of dmlc: the elements in a binary,
  in Nx's layout (dense, row-major, native endian), with a shape tuple and
  an Nx type tuple.

      t = Dmlc.Tensor.from_binary(<<1.0::float-32-native, 2.0::float-32-native>>, {:f, 32}, {2})
      Dmlc.Tensor.to_binary(t)

  With Nx, `Nx.to_binary(t)`, `Nx.shape(t)` and `Nx.type(t)` give the three
  fields, and `Nx.from_binary(data, type) |> Nx.reshape(shape)` goes back.

  Types: `{:f, 16 | 32 | 64}`, `{:bf, 16}`, `{:s, 8 | 16 | 32 | 64}`,
  `{:u, 8 | 16 | 32 | 64}`. dmlc's bool tensors come out as `{:u, 8}` (0
  or 1, as Nx holds booleans) and a `{:u, 8}` tensor of 0s and 1s is
  accepted for a bool input.

  ## Device tensors

  A tensor made with a `device:` option (`from_binary(data, type, shape,
  device: "cpu")`), by `zeros/3`, `ones/3`, `full/4` or `to_device/2`
  lives in dmlc's memory on that device ("cpu", "vulkan", "vulkan:N",
  "cuda", "cuda:N"; runtime/dml_tensor.h): its `ref` holds the C handle and
  `data` is nil. `to_binary/1` copies it back; `free/1` returns its memory
  at once (else the garbage collector does), after which every use is a
  `Dmlc.Error` "use after free".

      t = Dmlc.Tensor.ones({2, 3}, {:f, 32}, device: "cpu")
      {:ok, y} = Dmlc.Tensor.add(t, t)          # y on t's device
      Dmlc.Tensor.to_binary(y)                  # six 2.0s
      :ok = Dmlc.Tensor.free(t)

  The eager ops below (`add/2`, `matmul/2`, `softmax/2`, ... and `op/4`
  for any other) run one op with dmlc's runtime kernels
  (runtime/dml_tensor.h, docs/tensor.md) on the device of their first
  device tensor (binary tensors among the inputs are copied there), giving
  device tensors; with binary tensors alone, on the CPU, giving binary
  tensors. Their shapes, broadcasting and numerics are ONNX's. They return
  `{:ok, tensor}` or `{:error, %Dmlc.Error{}}` (a shape mismatch names the
  op and both shapes).
  """
  defstruct data: <<>>, shape: {}, type: {:f, 32}, ref: nil, device: nil

  @type type :: {:f, 16 | 32 | 64} | {:bf, 16} | {:s, 8 | 16 | 32 | 64} | {:u, 8 | 16 | 32 | 64}
  @type t :: %__MODULE__{
          data: binary | nil,
          shape: tuple,
          type: type,
          ref: reference | nil,
          device: String.t() | nil
        }

  @names %{
    {:f, 32} => "f32",
    {:f, 16} => "f16",
    {:bf, 16} => "bf16",
    {:f, 64} => "f64",
    {:s, 8} => "i8",
    {:s, 16} => "i16",
    {:s, 32} => "i32",
    {:s, 64} => "i64",
    {:u, 8} => "u8",
    {:u, 16} => "u16",
    {:u, 32} => "u32",
    {:u, 64} => "u64"
  }
  @types Map.new(@names, fn {k, v} -> {v, k} end) |> Map.put("bool", {:u, 8})

  @doc "Normalizes a type: `{:f, 32}` or the shorthand atoms `:f32`, `:s64`, `:bf16`, ..."
  def normalize_type({_, _} = t) when is_map_key(@names, t), do: t

  def normalize_type(a) when is_atom(a) do
    case Regex.run(~r/^(f|bf|s|u)(\d+)$/, Atom.to_string(a)) do
      [_, k, b] -> normalize_type({String.to_atom(k), String.to_integer(b)})
      _ -> raise ArgumentError, "unknown tensor type #{inspect(a)}"
    end
  end

  def normalize_type(t), do: raise(ArgumentError, "unknown tensor type #{inspect(t)}")

  @doc "Bytes per element of a type."
  def byte_size_of({_, bits}), do: div(bits, 8)

  @doc """
  A tensor from `data` (a binary of the elements, row-major, native endian)
  of `type` and `shape` (default: one dim of every element). Raises
  ArgumentError when the size of `data` is not the shape's. With `device:
  name` the elements are copied to that device (a device tensor); raises
  `Dmlc.Error` when the device cannot be opened.
  """
  def from_binary(data, type, shape \\ nil, opts \\ [])

  def from_binary(data, type, shape, opts) when is_binary(data) and opts != [] do
    t = from_binary(data, type, shape)
    to_device(t, Keyword.fetch!(opts, :device))
  end

  def from_binary(data, type, shape, []) when is_binary(data) do
    type = normalize_type(type)
    size = byte_size_of(type)
    shape = shape || {div(byte_size(data), size)}
    want = Tuple.to_list(shape) |> Enum.reduce(size, &(&1 * &2))

    if want != byte_size(data),
      do:
        raise(ArgumentError,
          message:
            "data holds #{byte_size(data)} bytes, shape #{inspect(shape)} of #{inspect(type)} needs #{want}"
        )

    %__MODULE__{data: data, shape: shape, type: type}
  end

  @doc "The elements of `t` as a binary (a copy from its device for a device tensor; raises `Dmlc.Error` for a freed one)."
  def to_binary(%__MODULE__{ref: nil, data: d}), do: d

  def to_binary(%__MODULE__{ref: r}) do
    {_, _, data} = nif!(Dmlc.NIF.tensor_to_binary(r))
    data
  end

  @doc "The shape of `t`, a tuple."
  def shape(%__MODULE__{shape: s}), do: s

  @doc "The type of `t`, an Nx type tuple such as `{:f, 32}`."
  def type(%__MODULE__{type: t}), do: t

  @doc "The device of a device tensor (\"cpu\", \"vulkan\", ...), `nil` for a binary tensor."
  def device(%__MODULE__{device: d}), do: d

  for {f, kind} <- [zeros: "zeros", ones: "ones"] do
    @doc """
    A device tensor of `shape` and `type` (default `{:f, 32}`) filled with
    #{kind} on `device:` (default "cpu"). Raises `Dmlc.Error` (a bad shape,
    a device this build lacks).
    """
    def unquote(f)(shape, type \\ {:f, 32}, opts \\ []),
      do: new(unquote(kind), shape, type, 0, opts)
  end

  @doc """
  A device tensor of `shape` and `type` whose every element is `value`
  (converted as C converts; f16/bf16 round to nearest even) on `device:`
  (default "cpu").
  """
  def full(shape, value, type \\ {:f, 32}, opts \\ []), do: new("full", shape, type, value, opts)

  defp new(kind, shape, opts, value, []) when is_list(opts),
    do: new(kind, shape, {:f, 32}, value, opts)

  defp new(kind, shape, type, value, opts) do
    type = normalize_type(type)
    dev = Keyword.get(opts, :device, "cpu")
    from_nif(nif!(Dmlc.NIF.tensor_new(kind, Map.fetch!(@names, type), shape, dev, value)))
  end

  @doc """
  A copy of `t` on `device` (a device tensor; contiguous). A binary tensor
  is uploaded.
  """
  def to_device(%__MODULE__{ref: nil} = t, device),
    do: from_nif(nif!(Dmlc.NIF.tensor_from_binary(to_nif(t), device)))

  def to_device(%__MODULE__{ref: r}, device), do: from_nif(nif!(Dmlc.NIF.tensor_to_device(r, device)))

  @doc """
  Frees a device tensor now: its memory goes back to the device. Any later
  use of it is a `Dmlc.Error` "use after free" (`{:error, e}` from a second
  free). A binary tensor has nothing to free (`:ok`).
  """
  def free(%__MODULE__{ref: nil}), do: :ok
  def free(%__MODULE__{ref: r}), do: Dmlc.NIF.tensor_free(r) |> Dmlc.Error.wrap()

  @doc """
  The bytes and the number of storages the live device tensors of `device`
  hold now: `{:ok, {bytes, storages}}` (dml_rt_device_bytes).
  """
  def device_memory(device \\ "cpu"), do: Dmlc.NIF.device_memory(device) |> Dmlc.Error.wrap()

  defp nif!(result) do
    case Dmlc.Error.wrap(result) do
      {:ok, v} -> v
      {:error, e} -> raise e
    end
  end

  @doc "A tensor of `type` from a (nested) list of numbers (floats may be `:nan`, `:infinity`, `:neg_infinity`)."
  def from_list(list, type \\ {:f, 32}) do
    type = normalize_type(type)
    shape = list_shape(list)
    data = for x <- List.flatten(List.wrap(list)), into: <<>>, do: encode(x, type)
    %__MODULE__{data: data, shape: shape, type: type}
  end

  defp list_shape([h | _] = l), do: Tuple.insert_at(list_shape(h), 0, length(l))
  defp list_shape([]), do: {0}
  defp list_shape(_), do: {}

  @doc "The elements of `t` as a flat list of numbers (`:nan`, `:infinity`, `:neg_infinity` for those)."
  def to_flat_list(%__MODULE__{type: type} = t), do: decode(to_binary(t), type)

  @mant %{16 => 10, 32 => 23, 64 => 52}

  defp encode(x, {:f, b}) when b in [16, 32, 64] and is_number(x), do: <<x::float-size(b)-native>>

  defp encode(x, {:f, b}) when x in [:nan, :infinity, :neg_infinity] do
    m = @mant[b]
    exp = Bitwise.bsl(Bitwise.bsl(1, b - 1 - m) - 1, m)

    bits =
      case x do
        :nan -> exp + Bitwise.bsl(1, m - 1)
        :infinity -> exp
        :neg_infinity -> exp + Bitwise.bsl(1, b - 1)
      end

    <<bits::unsigned-size(b)-native>>
  end

  defp encode(x, {:s, b}), do: <<x::signed-size(b)-native>>
  defp encode(x, {:u, b}), do: <<x::unsigned-size(b)-native>>

  defp encode(x, t),
    do: op!("Cast", [from_list([x], {:f, 32})], [{"to", onnx_code(t)}]) |> to_binary()

  # NaN and infinities (which BEAM floats cannot hold) as :nan, :infinity, :neg_infinity.
  defp decode(d, {:f, b}) when b in [16, 32, 64] do
    for <<c::binary-size(div(b, 8)) <- d>> do
      case c do
        <<x::float-size(b)-native>> ->
          x

        _ ->
          <<u::unsigned-size(b)-native>> = c

          cond do
            Bitwise.band(u, Bitwise.bsl(1, @mant[b]) - 1) != 0 -> :nan
            Bitwise.bsr(u, b - 1) == 1 -> :neg_infinity
            true -> :infinity
          end
      end
    end
  end

  defp decode(d, {:s, b}), do: for(<<x::signed-size(b)-native <- d>>, do: x)
  defp decode(d, {:u, b}), do: for(<<x::unsigned-size(b)-native <- d>>, do: x)

  defp decode(d, t),
    do:
      op!("Cast", [%__MODULE__{data: d, shape: {div(byte_size(d), 2)}, type: t}], [{"to", 1}])
      |> to_flat_list()

  # ONNX's dtype code (Cast's `to`) of a type, from dmlc's table (dml_dtype_onnx_code).
  defp onnx_code(t), do: Dmlc.NIF.dtype_onnx_code(Map.fetch!(@names, normalize_type(t)))

  @doc """
  `t`'s elements converted to `type` (ONNX Cast on the CPU: floats to
  integers truncate toward zero, f16/bf16 round to nearest even).
  """
  def as_type(%__MODULE__{} = t, type), do: op("Cast", [t], to: onnx_code(normalize_type(type)))

  @doc false
  def to_nif(%__MODULE__{ref: nil, data: d, shape: s, type: t}),
    do: {Map.fetch!(@names, normalize_type(t)), s, d}

  def to_nif(%__MODULE__{ref: r, shape: s, type: t}) when is_reference(r),
    do: {Map.fetch!(@names, normalize_type(t)), s, to_binary(%__MODULE__{ref: r})}

  def to_nif(%{__struct__: Nx.Tensor} = t), do: to_nif(from_nx(t))

  def to_nif(other),
    do: raise(ArgumentError, "expected a %Dmlc.Tensor{}, got #{inspect(other, limit: 5)}")

  @doc false
  def from_nif({ref, {name, shape, device}}) when is_reference(ref),
    do: %__MODULE__{data: nil, ref: ref, device: device, shape: shape, type: Map.fetch!(@types, name)}

  def from_nif({name, shape, data}),
    do: %__MODULE__{data: data, shape: shape, type: Map.fetch!(@types, name)}

  @doc """
  A `%Dmlc.Tensor{}` of an `Nx.Tensor` (its binary, type and shape; Nx must
  be loaded). Every function taking tensors also takes `Nx.Tensor`s
  directly.
  """
  def from_nx(%{__struct__: Nx.Tensor} = t) do
    nx = Nx

    %__MODULE__{
      data: nx.to_binary(t),
      type: normalize_type(nx.type(t)),
      shape: nx.shape(t)
    }
  end

  @doc "The `Nx.Tensor` of `t` (Nx must be loaded)."
  def to_nx(%__MODULE__{data: d, type: type, shape: shape}) do
    nx = Nx
    d |> nx.from_binary(type) |> nx.reshape(shape)
  end

  @doc "The element count of `t`."
  def size(%__MODULE__{shape: s}), do: Tuple.to_list(s) |> Enum.reduce(1, &(&1 * &2))

  # ---- eager ops ----

  @doc """
  Runs the ONNX op `name` ("Add", "Conv", "ReduceSum", ...) on `inputs`
  (tensors; `nil` for an absent optional input) with `attrs` (a keyword list or
  `[{name, value}]`: integers, floats, strings, lists of numbers), returning
  `{:ok, [outputs]}` when `n_outputs` > 1, else `{:ok, output}`.
  """
  def op(name, inputs, attrs \\ [], n_outputs \\ 1) do
    ins =
      Enum.map(inputs, fn
        nil -> nil
        %__MODULE__{ref: r} when is_reference(r) -> r
        t -> to_nif(t)
      end)

    attrs = Enum.map(attrs, fn {k, v} -> {to_string(k), v} end)

    case Dmlc.NIF.eager_op(name, ins, attrs, n_outputs) |> Dmlc.Error.wrap() do
      {:ok, [one]} when n_outputs == 1 -> {:ok, from_nif(one)}
      {:ok, many} -> {:ok, Enum.map(many, &from_nif/1)}
      err -> err
    end
  end

  @doc "As `op/4`, raising `Dmlc.Error`."
  def op!(name, inputs, attrs \\ [], n_outputs \\ 1) do
    case op(name, inputs, attrs, n_outputs) do
      {:ok, v} -> v
      {:error, e} -> raise e
    end
  end

  for {f, onnx} <- [
        add: "Add",
        subtract: "Sub",
        multiply: "Mul",
        divide: "Div",
        pow: "Pow",
        max: "Max",
        min: "Min"
      ] do
    @doc "Elementwise `#{onnx}` with ONNX (NumPy) broadcasting."
    def unquote(f)(a, b), do: op(unquote(onnx), [a, b])
  end

  # Kernel's == < ... cannot be overloaded for a struct: the comparisons
  # are functions, named as Nx names them.
  for {f, onnx} <- [
        equal: "Equal",
        less: "Less",
        less_equal: "LessOrEqual",
        greater: "Greater",
        greater_equal: "GreaterOrEqual"
      ] do
    @doc """
    Elementwise `#{onnx}` with ONNX (NumPy) broadcasting: `{:ok, t}` of a
    `{:u, 8}`-typed tensor of 0 and 1 (dmlc's bool; NaN compares false).
    """
    def unquote(f)(a, b), do: op(unquote(onnx), [a, b])
  end

  @doc """
  Elementwise `a != b`: Not(Equal) (NaN != NaN is 1), a bool tensor as
  `equal/2`'s.
  """
  def not_equal(a, b) do
    with {:ok, eq} <- equal(a, b) do
      case eq do
        %__MODULE__{ref: nil, shape: s, data: d} ->
          # a binary tensor holds the bools as u8: Not takes them as bool
          case Dmlc.NIF.eager_op("Not", [{"bool", s, d}], [], 1) |> Dmlc.Error.wrap() do
            {:ok, [y]} -> {:ok, from_nif(y)}
            err -> err
          end

        _ ->
          r = op("Not", [eq])
          :ok = free(eq)
          r
      end
    end
  end

  @doc "Matrix product (ONNX MatMul: batched, broadcasting leading dims)."
  def matmul(a, b), do: op("MatMul", [a, b])

  for {f, onnx} <- [
        exp: "Exp",
        log: "Log",
        sqrt: "Sqrt",
        abs: "Abs",
        negate: "Neg",
        relu: "Relu",
        sigmoid: "Sigmoid",
        tanh: "Tanh"
      ] do
    @doc "Elementwise `#{onnx}`."
    def unquote(f)(a), do: op(unquote(onnx), [a])
  end

  @doc "Softmax over `axis` (default the last)."
  def softmax(a, axis \\ -1), do: op("Softmax", [a], axis: axis)

  @doc "Sum over `axes` (all when `nil`), keeping them as size 1 when `keep_axes`."
  def sum(a, axes \\ nil, keep_axes \\ false), do: reduce("ReduceSum", a, axes, keep_axes)

  @doc "Mean over `axes` (all when `nil`), keeping them as size 1 when `keep_axes`."
  def mean(a, axes \\ nil, keep_axes \\ false), do: reduce("ReduceMean", a, axes, keep_axes)

  defp reduce(onnx, a, axes, keep) do
    axes_t = if axes, do: from_list(List.wrap(axes), {:s, 64})
    op(onnx, [a, axes_t], keepdims: if(keep, do: 1, else: 0))
  end

  @doc "Index of the largest element along `axis` (s64)."
  def argmax(a, axis \\ -1), do: op("ArgMax", [a], axis: axis, keepdims: 0)

  @doc "`a` with its dims permuted (`perm` nil: reversed)."
  def transpose(a, perm \\ nil), do: op("Transpose", [a], if(perm, do: [perm: perm], else: []))

  @doc "`a` with the same elements in `shape` (one dim may be -1)."
  def reshape(a, shape) when is_tuple(shape),
    do: op("Reshape", [a, from_list(Tuple.to_list(shape), {:s, 64})])
end
