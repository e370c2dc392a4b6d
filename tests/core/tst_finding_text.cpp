// SPDX-License-Identifier: MIT
// How findings are told (core/findings/finding_groups.h and ckpt's text): repeats grouped, numbers
// masked, the recovery guide's §10.1 order, a pair's finding counted once, and the verdict first in
// ckpt check and ckpt show.
#include "test_support.h"

#include "ckpt/findings/finding_groups.h"
#include "ckpt/rules/check.h"

#include <QTest>

using namespace ckpt;
using namespace testsupport;

namespace {

std::string sample(const std::string& rel) { return std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + rel; }

Finding finding(const char* rule, Severity s, Component c, std::string message, std::vector<std::string> checkpoints)
{
    Finding f;
    f.rule = rule;
    f.severity = s;
    f.component = c;
    f.message = std::move(message);
    f.checkpoints = std::move(checkpoints);
    return f;
}

} // namespace

class TestFindingText : public QObject {
    Q_OBJECT
private slots:
    void findingsSorted()
    {
        const CheckReport r = checkPaths({sample("broken/missing-rank-rng")});
        for (std::size_t i = 1; i < r.findings.size(); ++i)
            QVERIFY(r.findings[i - 1].severity >= r.findings[i].severity);
    }

    void cliTextGroupedBySeverity()
    {
        const CkptRun run = runCkpt({"check", q(sample("broken/data-cursor-wrong")).constData()});
        QCOMPARE(run.code, 1);
        const QByteArray out = run.out;
        // The verdict first, naming the errors; then the data errors in full, before the scaler's info.
        QVERIFY2(out.indexOf("Verdict: 2 errors and 0 warnings") < out.indexOf("error    data.cursor-delta  [data;"), out.constData());
        const auto data = out.indexOf("error    data.cursor-delta"), scaler = out.indexOf("scaler.skipped-steps");
        QVERIFY2(data >= 0 && scaler > data, out.constData());
        QVERIFY(out.contains("  error data.cursor-delta (2 checkpoints: checkpoint-0000200, checkpoint-0000300)"));
        QVERIFY(out.contains("batch_pos in B: 36"));
        QVERIFY(out.contains("discontinuity: data.cursor at step 300"));
    }

    // The groups every front-end tells findings by (issue 42): numbers masked, checkpoints in the run's
    // order, errors first and then the recovery guide's §10.1 order.
    void findingGroups()
    {
        QCOMPARE(messagePattern("step 8 of 16, lr 1e-05 at 0.5"), std::string("step # of #, lr # at #"));
        const std::vector<Finding> findings = {
            finding("rng.missing", Severity::Info, Component::Rng, "no RNG state", {"run/step-30"}),
            finding("rng.missing", Severity::Info, Component::Rng, "no RNG state", {"run/step-10"}),
            finding("optimizer.step-behind", Severity::Warning, Component::Optimizer, "optimizer step 8 behind 10", {"run/step-10"}),
            finding("data.cursor-delta", Severity::Warning, Component::Data, "advanced 92 of 100", {"run/step-20"}),
            finding("optimizer.step-behind", Severity::Warning, Component::Optimizer, "optimizer step 18 behind 20", {"run/step-20"}),
            finding("rng.missing", Severity::Info, Component::Rng, "no RNG state", {"run/step-20"}),
            finding("security.dangerous-import", Severity::Error, Component::Security, "os.system", {"run/step-20"}),
        };
        const auto groups = groupFindings(findings, {"run/step-10", "run/step-20", "run/step-30"});
        QCOMPARE(groups.size(), std::size_t(4));
        QCOMPARE(groups[0].rule, std::string("security.dangerous-import"));
        QCOMPARE(groups[1].rule, std::string("data.cursor-delta")); // the data before the optimizer (§10.1)
        QCOMPARE(groups[2].rule, std::string("optimizer.step-behind"));
        QCOMPARE(groups[2].members, (std::vector<std::size_t>{2, 4}));
        QCOMPARE(groups[2].message, std::string("optimizer step 8 behind 10"));
        QCOMPARE(groups[3].rule, std::string("rng.missing"));
        QCOMPARE(groups[3].checkpoints, (std::vector<std::string>{"run/step-10", "run/step-20", "run/step-30"}));
        QCOMPARE(groups[3].members, (std::vector<std::size_t>{1, 5, 0}));
    }

    void showPrintsFindings()
    {
        const CkptRun run = runCkpt({"show", q(sample("broken/scheduler-stepped-twice/checkpoint-0000300")).constData()});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.contains("findings:"), run.out.constData());
        QVERIFY(run.out.contains("scheduler.position"));
    }

    // A front-end that lists a pair's finding under both of its checkpoints counts it once; the
    // verdict says so in the words ckpt check uses.
    void repeatsAndVerdict()
    {
        const Finding pair = finding("scaler.unreachable", Severity::Error, Component::Scaler, "cannot follow", {"run/a", "run/b"});
        const Finding info = finding("rng.missing", Severity::Info, Component::Rng, "no RNG state", {"run/a"});
        const std::vector<Finding> listed = {pair, info, pair};
        const std::vector<Finding> once = withoutRepeats(listed);
        QCOMPARE(once.size(), std::size_t(2));
        const Verdict v = verdictOf(once, groupFindings(once, {"run/a", "run/b"}), 2, 86);
        QCOMPARE(v.headline, std::string("1 error and 0 warnings; in the order to look at them:"));
        QCOMPARE(v.lines, (std::vector<std::string>{"error scaler.unreachable (2 checkpoints: a, b): cannot follow"}));
        const std::vector<Finding> quiet = {info};
        QCOMPARE(verdictOf(quiet, groupFindings(quiet), 1, 86).headline,
                 std::string("nothing inconsistent found (86 rules over 1 checkpoint); 1 thing the files do not record or cannot decide (info), in 1 group."));
    }
};

QTEST_GUILESS_MAIN(TestFindingText)
#include "tst_finding_text.moc"
