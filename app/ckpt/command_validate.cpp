// SPDX-License-Identifier: MIT
// ckpt validate: runs ckpt-validate (the LibTorch resume validator, a separate executable so the
// light ckpt never links LibTorch) locally or through a launcher prefix such as `ssh gpu01 --` or
// `srun --gres=gpu:1 --time=10 --`, streams its JSON lines, and exits with its exit code.
#include "commands.h"

#include "ckpt/io/launcher.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// Beside this ckpt: build/bin/ckpt-validate, or <prefix>/bin/ckpt-validate once installed.
std::string defaultValidator()
{
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("ckpt-validate") : (self.parent_path() / "ckpt-validate").string();
}

void printHuman(const nlohmann::json& event)
{
    if (event.value("event", "") == "progress") {
        std::cout << "[" << event.value("index", 0) << "/" << event.value("of", 0) << "] " << event.value("message", "") << "\n";
        return;
    }
    if (event.value("event", "") != "report")
        return;
    std::cout << "verdict: " << event.value("verdict", "?");
    if (event.contains("first_difference") && event["first_difference"].is_string()) {
        std::cout << " (first difference: " << event["first_difference"].get<std::string>();
        if (event.value("updates_compared", 1) > 1 && event.value("first_difference_update", nlohmann::json()).is_number())
            std::cout << ", update " << event["first_difference_update"].get<int>() << " of " << event["updates_compared"].get<int>();
        std::cout << ")";
    }
    const nlohmann::json gaps = event.value("not_compared", nlohmann::json::array());
    if (event.value("verdict", "") == "partial" && !gaps.empty()) // the first line says what was left out
        std::cout << " (not compared: " << gaps[0].value("component", "") << " " << gaps[0].value("check", "") << ", "
                  << gaps[0].value("why", "") << (gaps.size() > 1 ? "; and " + std::to_string(gaps.size() - 1) + " more" : "")
                  << ")";
    std::cout << "\n";
    if (event.contains("error"))
        std::cout << "error: " << event["error"].get<std::string>() << "\n";
    const auto printComponents = [](const nlohmann::json& components, const char* indent) {
        for (const auto& c : components) {
            std::cout << indent << c.value("name", "") << ": " << c.value("verdict", "") << "\n";
            for (const auto& ch : c.value("checks", nlohmann::json::array())) {
                if (ch.value("verdict", "") == "exact")
                    continue;
                std::cout << indent << "    " << ch.value("name", "") << ": " << ch.value("verdict", "");
                if (ch.contains("detail"))
                    std::cout << " - " << ch["detail"].get<std::string>();
                std::cout << "\n";
            }
        }
    };
    const nlohmann::json later = event.value("updates", nlohmann::json::array());
    if (!later.empty())
        std::cout << "  update 1:\n";
    printComponents(event.value("components", nlohmann::json::array()), later.empty() ? "  " : "    ");
    for (const auto& u : later) {
        std::cout << "  update " << u.value("update", 0) << ":\n";
        printComponents(u.value("components", nlohmann::json::array()), "    ");
    }
    for (const auto& n : event.value("notes", nlohmann::json::array()))
        std::cout << "  note: " << n.get<std::string>() << "\n";
}

} // namespace

int runValidate(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("validate needs one checkpoint: ckpt validate CKPT [--probe P] [--device D] [--launcher PREFIX] [--json] "
                        "[--rtol X] [--threads N] [--validator PATH]");
    std::vector<std::string> forward = {args.positional[0]};
    for (const char* name : {"--probe", "--device", "--rtol", "--threads"}) {
        if (const auto v = args.option(name)) {
            forward.push_back(name);
            forward.push_back(*v);
        }
    }
    const char* envLauncher = std::getenv("CKPT_LAUNCHER");
    const char* envValidator = std::getenv("CKPT_VALIDATE");
    const std::string launcher = args.option("--launcher").value_or(envLauncher ? envLauncher : "");
    const std::string validator = args.option("--validator").value_or(envValidator ? envValidator : defaultValidator());
    std::vector<std::string> argv;
    try {
        argv = ckpt::launchCommand(launcher, validator, forward);
    } catch (const ckpt::LauncherError& e) {
        return failWith(std::string("--launcher: ") + e.what());
    }
    if (launcher.empty() && !fs::exists(validator))
        return failWith(validator + ": ckpt-validate is not built here (it needs LibTorch: see the README), "
                                    "or pass --validator PATH");

    int out[2];
    if (pipe(out) != 0)
        return failWith(std::string("cannot create a pipe: ") + std::strerror(errno));
    std::cout.flush();
    const pid_t pid = fork();
    if (pid < 0)
        return failWith(std::string("cannot start the validator: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        std::vector<char*> cargv;
        for (auto& a : argv)
            cargv.push_back(a.data());
        cargv.push_back(nullptr);
        execvp(cargv[0], cargv.data());
        std::fprintf(stderr, "ckpt: cannot run %s: %s\n", cargv[0], std::strerror(errno));
        _exit(127);
    }
    close(out[1]);
    const bool json = args.has("--json");
    FILE* in = fdopen(out[0], "r");
    bool sawReport = false;
    char* line = nullptr;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        const std::string text(line);
        nlohmann::json event = nlohmann::json::parse(text, nullptr, false);
        sawReport = sawReport || (event.is_object() && event.value("event", "") == "report");
        if (json)
            std::cout << text << std::flush; // JSON lines passed through as they arrive
        else if (event.is_object())
            printHuman(event), std::cout.flush();
        else
            std::cout << text; // something the launcher printed (ssh banners, srun notices)
    }
    std::free(line);
    fclose(in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return failWith("the validator was killed by signal " + std::to_string(WTERMSIG(status)) + " ("
                        + strsignal(WTERMSIG(status)) + ")");
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitUnreadable;
    if (code == 127)
        return failWith("cannot run " + ckpt::quoteCommandLine(argv));
    if (!sawReport)
        return failWith("the validator ended (exit " + std::to_string(code) + ") without a report: "
                        + ckpt::quoteCommandLine(argv));
    return code <= 3 ? code : kExitUnreadable; // 3: partial, passed through like 0, 1 and 2
}
