defmodule Mix.Tasks.Compile.DmlcNif do
  @moduledoc """
  Builds the NIF `dmlc_nif.so` (into the app's priv folder under `_build`) with `make` (bindings/elixir/Makefile)
  against an installed dmlc: `DMLC_PREFIX` (the prefix given to
  `cmake --install`), or a build tree of this checkout: `DMLC_BUILD_DIR`,
  else pkg-config's `dmlc`. No dependencies, no network.
  """
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])
    # The NIF goes into the app's build folder (`:code.priv_dir(:dmlc)`), not the source tree.
    priv = Path.join(Mix.Project.app_path(), "priv")
    args = ["--no-print-directory", "-C", __DIR__, "ERTS_INCLUDE_DIR=#{erts}", "PRIV=#{priv}"]

    args =
      args ++
        for var <- ["DMLC_PREFIX", "DMLC_BUILD_DIR"],
            dir = System.get_env(var),
            dir not in [nil, ""],
            do: "#{var}=#{Path.expand(dir)}"

    case System.cmd("make", args, stderr_to_stdout: true) do
      {out, 0} ->
        if out =~ "dmlc_nif.so", do: Mix.shell().info(String.trim(out))
        {:ok, []}

      {out, status} ->
        Mix.shell().error(out)
        Mix.raise("building the dmlc NIF failed (make exited with #{status})")
    end
  end
end

defmodule Dmlc.MixProject do
  use Mix.Project

  def project do
    [
      app: :dmlc,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:dmlc_nif] ++ Mix.compilers(),
      start_permanent: Mix.env() == :prod,
      deps: [],
      description: "dmlc for Elixir: compile ONNX models ahead of time, train, run and serve them"
    ]
  end

  def application do
    [extra_applications: [:logger]]
  end
end
