// SPDX-License-Identifier: MIT
// Which globals a pickle references, and how far each can be trusted. Modelled on picklescan
// and fickling (anchors.md): the torch weights_only allowlist plus the legitimate training
// state it misses (numpy RNG, argparse.Namespace...) is safe; modules and functions that can
// run commands, open files or import code are dangerous; the rest is unknown.
#pragma once

#include "ckpt/pickle/call_flow.h"
#include "ckpt/pickle/pickle_machine.h"

#include <string>
#include <vector>

namespace ckpt {

enum class ImportSafety : uint8_t { Safe, Unknown, Dangerous };

const char* safetyName(ImportSafety safety);

struct ImportEntry {
    std::string record;   // the pickle it came from: "data.pkl", "object pickle", a zip member
    std::string module;
    std::string name;
    int count = 0;
    ImportSafety safety = ImportSafety::Unknown;
    std::string reason;   // one phrase: why it is dangerous, or what a safe one is

    std::string path() const { return module + "." + name; }
};

struct ImportsReport {
    std::vector<ImportEntry> entries;
    std::vector<std::string> notes;   // structural findings: code after STOP, unreadable pickles...
    bool structuralDanger = false;    // a note that is itself a reason to distrust the file
    bool malformed = false;           // some pickle could not be read to its end
    /// picklescan's stance: every global that is called and outside the allowlist is dangerous.
    bool strict = false;

    using CalledGlobals = std::unordered_map<std::string, std::string>;
    /// `called`, when given, maps the globals the pickle calls to how (analyseCallFlow); one that is
    /// only referenced (a function stored as a value) can then be judged less harshly.
    void add(const std::string& record, const std::vector<PickleGlobal>& globals,
             const std::vector<GetattrUse>& getattrUses = {}, const CalledGlobals* called = nullptr);
    /// Adds everything a finished (or broken) machine saw, structural signs and writes into
    /// modules included. Returns the call flow, whose nested payloads the caller judges (they
    /// point into the machine's graph).
    CallFlow addMachine(const std::string& record, const PickleMachine& machine);
    /// The verdict on `loader` (torch.storage._load_from_bytes) once the bytes it unpickles were
    /// read: safe when they hold nothing dangerous and could be read whole.
    void judgeNested(const std::string& record, const std::string& loader, bool benign, const std::string& why);
    bool anyDangerous() const;
    int count(ImportSafety safety) const;
};

/// Classifies one global; `reason` receives a short justification.
ImportSafety classifyGlobal(const std::string& module, const std::string& name, std::string& reason);

/// True when classifyGlobal's verdict came from a broad rule (any standard-library callable,
/// harmless operator functions) rather than from the list of known-dangerous globals.
bool isBroadDangerRule(const std::string& module, const std::string& name);

/// Whether one getattr REDUCE is the benign kind (an enum member or a bound method); when not,
/// `reason` says what it reaches for.
bool isBenignGetattr(const GetattrUse& use, std::string& reason);

/// Walks a pickle's opcodes without building anything (like pickletools.genops) and returns
/// the GLOBAL / INST operands from `start` on. Used to list the globals after the point where
/// a malformed pickle stopped the machine. Stops quietly at the first undecodable opcode.
std::vector<PickleGlobal> scanGlobalOpcodes(Bytes data, std::size_t start, std::size_t* stopOffset = nullptr);

} // namespace ckpt
