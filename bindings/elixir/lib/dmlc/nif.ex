defmodule Dmlc.NIF do
  # The NIF (c_src/dmlc_nif.c, which documents every function's terms).
  # Loading never fails the module: when the library cannot be loaded the
  # reason is kept for Dmlc.available?/0 and Dmlc.Error, and every stub
  # raises.
  @moduledoc false
  @on_load :load_nif

  def load_nif do
    path = :filename.join(:code.priv_dir(:dmlc), ~c"dmlc_nif")

    case :erlang.load_nif(path, 0) do
      :ok ->
        :ok

      {:error, {_, text}} ->
        :persistent_term.put({__MODULE__, :load_error}, to_string(text))
        :ok
    end
  end

  @doc false
  def load_error, do: :persistent_term.get({__MODULE__, :load_error}, nil)

  defp nif, do: :erlang.nif_error({:dmlc_nif_not_loaded, load_error()})

  def available_targets, do: nif()
  def gpu_devices(_kind), do: nif()
  def compile_onnx(_onnx, _base_dir, _source, _opts), do: nif()
  def load_bytes(_bytes), do: nif()
  def model_free(_model), do: nif()
  def save(_model, _path), do: nif()
  def info(_model), do: nif()
  def run(_model, _device, _inputs), do: nif()
  def run_device(_model, _device, _inputs, _outputs_on_device), do: nif()
  def transfer_stats(_model, _device), do: nif()
  def predict(_model, _device, _x, _output), do: nif()
  def benchmark(_model, _device, _inputs, _iterations, _warmup), do: nif()
  def check(_model, _device, _seed, _iterations), do: nif()
  def fit_control, do: nif()
  def fit_ack(_ctl, _epoch, _halt), do: nif()
  def fit(_model, _device, _x, _y, _opts, _ctl, _listener, _tag), do: nif()
  def evaluate(_model, _device, _x, _y, _batch_size), do: nif()
  def checkpoint(_model, _device, _path, _save, _seed), do: nif()
  def serve_start(_model, _device, _batch_size, _batch_timeout_ms, _instances), do: nif()
  def serve_submit(_serve, _inputs, _pid, _tag), do: nif()
  def serve_stats(_serve), do: nif()
  def serve_stop(_serve), do: nif()
  def eager_op(_op, _inputs, _attrs, _n_outputs), do: nif()
  def tensor_new(_kind, _dtype, _shape, _device, _value), do: nif()
  def tensor_from_binary(_tensor, _device), do: nif()
  def tensor_to_binary(_ref), do: nif()
  def tensor_to_device(_ref, _device), do: nif()
  def tensor_free(_ref), do: nif()
  def device_memory(_device), do: nif()
  def npy_read(_path), do: nif()
  def npy_write(_path, _tensor), do: nif()
  def dtype_onnx_code(_name), do: nif()
end
