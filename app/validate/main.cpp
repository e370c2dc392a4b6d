// SPDX-License-Identifier: MIT
// ckpt-validate CKPT [--probe DIR] [--device auto|cpu|cuda|cuda:N] [--rtol X] [--threads N]
// Replays the update after a checkpoint with LibTorch and compares it with the probe the training
// run recorded. JSON lines on stdout (progress events, then one report); exit 0 pass, 1 differs,
// 2 cannot run, 3 partial (nothing compared differs, but a part the run has was not compared).
#include "app/validate/validation.h"

#include "ckpt/report/json_export.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

constexpr const char* kUsage =
    "usage: ckpt-validate CHECKPOINT [--probe DIR] [--device auto|cpu|cuda|cuda:N] [--rtol X] [--threads N] | --version\n"
    "Restores CHECKPOINT (read without pickle code execution), replays the next update the probe recorded\n"
    "(default probe: <parent>/probes/after-<checkpoint name>/) and compares it component by component.\n"
    "Prints JSON lines: progress events, then one report. Exit 0 pass, 1 differs, 2 cannot run,\n"
    "3 partial (nothing compared differs, but a part the run has was not compared: see \"not_compared\").\n";

void emit(const nlohmann::json& event)
{
    std::cout << ckpt::dumpJson(event) << '\n' << std::flush; // one line per event, streamed as it happens
}

int usageError(const std::string& message)
{
    emit({{"event", "report"}, {"verdict", "cannot run"}, {"exit_code", 2}, {"error", message}});
    std::cerr << "ckpt-validate: " << message << "\n" << kUsage;
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    ckpt::validate::ValidateOptions options;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        }
        if (a == "--version") {
            std::cout << "ckpt-validate " << CKPT_VERSION << '\n';
            return 0;
        }
        if (a == "--probe" || a == "--device" || a == "--rtol" || a == "--threads") {
            const char* v = value();
            if (!v)
                return usageError(a + " needs a value");
            try {
                if (a == "--probe")
                    options.probe = v;
                else if (a == "--device")
                    options.device = v;
                else if (a == "--rtol")
                    options.rtol = std::stod(v);
                else
                    options.threads = std::stoi(v);
            } catch (const std::exception&) {
                return usageError(a + " needs a number, not '" + v + "'");
            }
        } else if (a.starts_with("--")) {
            return usageError("unknown option " + a);
        } else if (options.checkpoint.empty()) {
            options.checkpoint = a;
        } else {
            return usageError("more than one checkpoint given ('" + a + "')");
        }
    }
    if (options.checkpoint.empty())
        return usageError("no checkpoint given");
    // cuBLAS is deterministic only with a fixed workspace configuration; set before the first CUDA call.
    setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
    return ckpt::validate::runValidation(options, emit);
}
