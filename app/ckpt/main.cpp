// SPDX-License-Identifier: MIT
// ckpt: inspect PyTorch training checkpoints from the command line, without Python.
#include "ckpt_version.h"
#include "ckpt/io/process_memory.h"
#include "commands.h"

#include <iostream>
#include <stdexcept>

namespace {

constexpr const char* kUsage = R"(usage: ckpt COMMAND FILE [options]

Reads PyTorch checkpoints (torch.save zip and legacy files, TorchScript archives,
safetensors, plain pickles) without running Python or any code inside them.

commands:
  tensors FILE [--json] [--verify-crc]   every tensor: key path, dtype, shape, stride, size
  tensors PATH --stats [--json] [--exact-hist]
                                         also min, max, mean, std, L2, max|x|, NaN/Inf/zero counts and
                                         histograms; a checkpoint directory adds DCP chunk maps,
                                         merged ZeRO partitions and per-rank replica checks.
                                         --exact-hist: histograms of 32/64-bit tensors over 8 MiB equal
                                         torch.histc's bin for bin (a second look at their bytes)
  diff A B [--json]                      compare two checkpoints part by part: tensors (equal, changed,
                                         max|a-b|, rel. L2, cosine), optimizer, scheduler, scaler, RNG,
                                         data cursor, counters, environment
  tree FILE [--json] [--depth N]         the whole saved object as a tree
  imports FILE [--json] [--strict]       the globals its pickles reference, classified (--strict:
                                         every called global outside the allowlist is dangerous)
                                         safe / unknown / dangerous (exit 1 if dangerous)
  audit PATH [--json]                    verify a checkpoint or run directory against its manifests
  show PATH [--json]                     the training state S_t = (W,O,L,A,R,D,C,E) of one checkpoint
                                         (a file or a checkpoint directory of any layout)
  run DIR [--json]                       a run's checkpoints by step (latest, best, incomplete)
                                         and its logged metric series
  check PATH [PATH2] [--json]            the rule catalogue over a file, a checkpoint or run
        [--verbose]                      directory, or a pair (A before B): the verdict first,
        [--no-audit] [--no-content]      then repeated findings grouped, errors and warnings in
                                         full, info one line each (--verbose: every finding in
                                         full); exit 1 if any warning or error
  check --list-rules [--json]            the rule catalogue
  report PATH [--format md|json] [-o FILE] [--pair A B] [--no-audit] [--no-content]
                                         the report to attach to a bug: findings by part of S_t,
                                         S_t per checkpoint, resume points and strips, the pair
                                         across the resume (or the latest two) compared, probes
  validate CKPT [--probe P] [--device D] [--launcher PREFIX] [--json]
        [--rtol X] [--threads N] [--validator PATH]
                                         replay the update after CKPT with ckpt-validate (LibTorch)
                                         and compare it with the run's probe (exit 1 if it differs);
                                         --launcher "ssh HOST --" / "srun ... --" runs it elsewhere;
                                         --rtol the tolerance (1e-4), --validator which ckpt-validate
  --version                              print the version

exit codes: 0 ok, 1 findings (dangerous imports), 2 the file cannot be read
)";

} // namespace

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    ckpt::tuneAllocatorForTables();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? kExitUnreadable : kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "ckpt " << CKPT_VERSION << "\n";
        return kExitOk;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "tensors")
            return runTensors(parseCliArgs(args, {"--json", "--verify-crc", "--stats", "--exact-hist"}, {}));
        if (command == "tree")
            return runTree(parseCliArgs(args, {"--json"}, {"--depth"}));
        if (command == "imports")
            return runImports(parseCliArgs(args, {"--json", "--strict"}, {}));
        if (command == "audit") return runAudit(parseCliArgs(args, {"--json"}, {}));
        if (command == "show")
            return runShow(parseCliArgs(args, {"--json"}, {}));
        if (command == "run")
            return runRun(parseCliArgs(args, {"--json"}, {}));
        if (command == "check")
            return runCheck(parseCliArgs(args, {"--json", "--no-audit", "--no-content", "--list-rules", "--verbose"}, {}));
        if (command == "diff")
            return runDiff(parseCliArgs(args, {"--json"}, {}));
        if (command == "report")
            return runReport(parseCliArgs(args, {"--pair", "--no-audit", "--no-content"}, {"--format", "-o"}));
        if (command == "validate")
            return runValidate(parseCliArgs(args, {"--json"}, {"--probe", "--device", "--rtol", "--threads", "--launcher", "--validator"}));
    } catch (const std::invalid_argument& e) {
        return failWith(std::string(e.what()) + " (see ckpt --help)");
    } catch (const std::exception& e) {
        return failWith(std::string("internal error: ") + e.what());
    }
    return failWith("unknown command '" + command + "' (see ckpt --help)");
}
