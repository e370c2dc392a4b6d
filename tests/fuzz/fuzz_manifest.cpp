// SPDX-License-Identifier: MIT
// The manifest reader: a run folder with one committed checkpoint whose manifest.json is the
// input, beside a small model file, the COMPLETE marker and a `latest` pointer; the whole audit
// (entries, sizes, hashes, RNG ranks, latest) runs on one hashing thread.
#include "fuzz_support.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/report/json_export.h"

namespace {

const uint8_t kModel[] = "not really a model, but the audit only hashes it";
const uint8_t kLatest[] = "checkpoint-0000010\n";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    static const bool ready = [] {
        ckpt::fuzz::writeScratch("run/checkpoint-0000010/model.pt", kModel, sizeof kModel - 1);
        ckpt::fuzz::writeScratch("run/checkpoint-0000010/rng-rank-0.pt", kModel, 4);
        ckpt::fuzz::writeScratch("run/checkpoint-0000010/COMPLETE", kModel, 0);
        ckpt::fuzz::writeScratch("run/latest", kLatest, sizeof kLatest - 1);
        return true;
    }();
    (void)ready;
    ckpt::fuzz::writeScratch("run/checkpoint-0000010/manifest.json", data, size);
    ckpt::fuzz::refusalsAreFine([&] {
        ckpt::AuditOptions options;
        options.threads = 1;
        const ckpt::AuditResult result = ckpt::auditPath(ckpt::fuzz::scratchDir() + "/run", options);
        // As the CLI prints it: invalid UTF-8 in messages (file names, parser excerpts) is replaced.
        (void)ckpt::dumpJson(ckpt::auditResultToJson("run", result));
    });
    return 0;
}
