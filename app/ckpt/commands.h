// SPDX-License-Identifier: MIT
// One function per `ckpt` command. Each returns the process exit code:
// 0 success, 1 findings (e.g. dangerous imports), 2 the input cannot be read.
#pragma once

#include "cli_args.h"

constexpr int kExitOk = 0;
constexpr int kExitFindings = 1;
constexpr int kExitUnreadable = 2;

int runTensors(const CliArgs& args);
int runTree(const CliArgs& args);
int runImports(const CliArgs& args);
int runAudit(const CliArgs& args);
int runShow(const CliArgs& args);
int runRun(const CliArgs& args);
int runCheck(const CliArgs& args);
int runTensorStats(const CliArgs& args); // ckpt tensors PATH --stats
int runDiff(const CliArgs& args);
int runValidate(const CliArgs& args);
int runReport(const CliArgs& args);

/// Prints "ckpt: <message>" as one line on stderr and returns kExitUnreadable.
int failWith(const std::string& message);
