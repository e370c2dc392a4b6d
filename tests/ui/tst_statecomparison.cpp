// SPDX-License-Identifier: MIT
// compareStates on the sample runs: the good run's 200 -> 300 has changes but nothing
// inconsistent; the broken runs' resume faults that move against the global step are flagged.
#include "uitestutil.h"

#include "ui/statecomparison.h"

namespace {

ckpt::TrainingState state(const char* relative)
{
    return ckpt::readTrainingState(CKPT_SAMPLE_RUNS "/" + std::string(relative));
}

const CompareRow* find(const StateComparison& comparison, const std::string& component, const std::string& field)
{
    for (const CompareSection& section : comparison.sections) {
        if (section.component != component)
            continue;
        for (const CompareRow& row : section.rows) {
            if (row.field == field)
                return &row;
        }
    }
    return nullptr;
}

} // namespace

class TestStateComparison : public QObject {
    Q_OBJECT

private slots:
    void goodRunChangesWithoutInconsistency()
    {
        const StateComparison c = compareStates(state("ddp4-mlp/checkpoint-0000200"), state("ddp4-mlp/checkpoint-0000300"));
        QVERIFY2(c.inconsistencies.empty(), c.inconsistencies.empty() ? "" : c.inconsistencies.front().c_str());
        const CompareRow* step = find(c, "Progress counters (C)", "global_step (optimizer.pt)");
        QVERIFY(step);
        QCOMPARE(step->a, std::string("200"));
        QCOMPARE(step->b, std::string("300"));
        QCOMPARE(step->status, CompareStatus::Changed);
        const CompareRow* position = find(c, "Scheduler (L)", "last_epoch");
        QVERIFY(position);
        QCOMPARE(position->status, CompareStatus::Changed);
        const CompareRow* scale = find(c, "Grad scaler (A)", "scale");
        QVERIFY(scale);
        QCOMPARE(scale->a, std::string("16384"));
        QCOMPARE(scale->status, CompareStatus::Same);
        const CompareRow* adamStep = find(c, "Optimizer (O)", "step (first parameter)");
        QVERIFY(adamStep);
        QCOMPARE(adamStep->a, std::string("198"));
        QCOMPARE(adamStep->b, std::string("298"));
        // Four ranks with dropout: every generator moved.
        for (const CompareSection& section : c.sections) {
            if (section.component != "RNG fingerprints (R)")
                continue;
            QCOMPARE(section.rows.size(), std::size_t(12)); // 4 ranks x python, numpy, torch
            for (const CompareRow& row : section.rows)
                QCOMPARE(row.status, CompareStatus::Changed);
        }
    }

    void schedulerSteppedTwiceIsInconsistent()
    {
        const StateComparison c =
            compareStates(state("broken/scheduler-stepped-twice/checkpoint-0000200"), state("broken/scheduler-stepped-twice/checkpoint-0000300"));
        const CompareRow* position = find(c, "Scheduler (L)", "last_epoch");
        QVERIFY(position);
        QCOMPARE(position->b, std::string("400"));
        QCOMPARE(position->status, CompareStatus::Inconsistent);
        QCOMPARE(c.inconsistencies, std::vector<std::string>{"Scheduler (L): the scheduler advanced 200 positions while the global step advanced 100"});
    }

    void optimizerNotRestoredIsInconsistent()
    {
        const StateComparison c =
            compareStates(state("broken/optimizer-not-restored/checkpoint-0000200"), state("broken/optimizer-not-restored/checkpoint-0000300"));
        const CompareRow* step = find(c, "Optimizer (O)", "step (first parameter)");
        QVERIFY(step);
        QCOMPARE(step->b, std::string("100"));
        QCOMPARE(step->status, CompareStatus::Inconsistent);
        QCOMPARE(c.inconsistencies.size(), std::size_t(1));
    }

    void aStateAgainstItselfIsAllSame()
    {
        const ckpt::TrainingState s = state("hf-trainer/checkpoint-40");
        const StateComparison c = compareStates(s, s);
        QVERIFY(!c.sections.empty());
        for (const CompareSection& section : c.sections) {
            for (const CompareRow& row : section.rows)
                QVERIFY2(row.status == CompareStatus::Same, (section.component + ": " + row.field).c_str());
        }
    }

    void differentModelsShowOnlyInOne()
    {
        // A Lightning MLP against the 4-rank MLP: nothing in common but the structure of a state.
        const StateComparison c = compareStates(state("lightning/checkpoints/epoch=1-step=50.ckpt"), state("ddp4-mlp/checkpoint-0000100"));
        int onlyA = 0, onlyB = 0;
        for (const CompareSection& section : c.sections) {
            for (const CompareRow& row : section.rows) {
                onlyA += row.status == CompareStatus::OnlyA;
                onlyB += row.status == CompareStatus::OnlyB;
            }
        }
        QVERIFY(onlyA > 0);
        QVERIFY(onlyB > 0);
    }
};

QTEST_GUILESS_MAIN(TestStateComparison)
#include "tst_statecomparison.moc"
