// SPDX-License-Identifier: MIT
// The safe pickle machine and its interpretation into tensors and objects, as the loader runs
// them on a data.pkl (storages resolved to a table, never read), plus the imports scan that
// reads every pickle in a byte sequence.
#include "fuzz_support.h"

#include "ckpt/formats/imports_scan.h"
#include "ckpt/pickle/pickle_interpreter.h"
#include "ckpt/pickle/pickle_machine.h"

#include <map>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const ckpt::Bytes bytes{reinterpret_cast<const std::byte*>(data), size};
    ckpt::fuzz::refusalsAreFine([&] {
        ckpt::ValueGraph raw;
        ckpt::PickleMachine vm(raw);
        const ckpt::PickleRun run = vm.run(bytes);
        ckpt::Document doc;
        std::map<std::string, int32_t> byKey;
        const ckpt::StorageResolver resolver = [&](const ckpt::StorageRequest& req, std::string& problem) -> int32_t {
            if (req.key.empty()) {
                problem = "an empty storage key";
                return -1;
            }
            if (const auto it = byKey.find(req.key); it != byKey.end())
                return it->second;
            ckpt::StorageInfo s;
            s.key = req.key;
            s.location = req.location;
            s.dtype = req.dtype;
            s.numel = req.numel;
            doc.storages.push_back(std::move(s));
            const auto index = static_cast<int32_t>(doc.storages.size() - 1);
            byKey.emplace(req.key, index);
            return index;
        };
        doc.root = ckpt::interpretPickle(raw, run.root, doc, resolver);
    });
    ckpt::ImportsReport report;
    ckpt::scanPickleSequence(report, "data.pkl", bytes);
    return 0;
}
