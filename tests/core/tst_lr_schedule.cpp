// SPDX-License-Identifier: MIT
// Scheduler state_dicts made by tests/fixtures/make_lr_schedules.py (Debian's PyTorch): every saved state
// is recognised as the right scheduler, its recorded LR is read back, and for the schedulers with a known
// formula lrAt() reproduces the LR torch produced at every position of the run, before and after the
// saved one.
#include "test_support.h"

#include "ckpt/state/lr_schedule.h"

#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-9; // relative

double relativeError(double actual, double expected)
{
    if (actual == expected)
        return 0;
    const double scale = std::fabs(expected);
    return scale == 0 ? std::fabs(actual) : std::fabs(actual - expected) / scale;
}

std::string fieldOf(const LrSchedule& s, const std::string& key)
{
    for (const auto& [k, v] : s.fields)
        if (k == key)
            return v;
    return "<absent>";
}

} // namespace

class TestLrSchedule : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void savedStates_data();
    void savedStates();
    void fields();
    void oneCycleStopsAtTotalSteps();
    void inconsistentLastLrWarns();
    void notSchedulers();
    void hostileNesting();
    void cleanupTestCase();

private:
    struct Loaded {
        std::unique_ptr<CheckpointFile> file;
        NodeId scheduler = kNoNode, optimizer = kNoNode;
    };
    Loaded load(const json& entry) const;
    std::string path(const std::string& name) const { return m_dir.path().toStdString() + "/" + name; }

    QTemporaryDir m_dir;
    json m_expected;
    std::map<std::string, double> m_maxError;   // kind -> max relative error of lrAt over all files
    std::map<std::string, int> m_checkedValues; // kind -> LR values compared
};

void TestLrSchedule::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(CKPT_PYTHON),
            {QStringLiteral(CKPT_SOURCE_DIR) + "/tests/fixtures/make_lr_schedules.py", m_dir.path()});
    QVERIFY2(p.waitForFinished(180000), "make_lr_schedules.py did not finish");
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAll().constData());
    m_expected = readJson(path("lr_expected.json"));
    QVERIFY(m_expected["files"].size() > 50);
}

TestLrSchedule::Loaded TestLrSchedule::load(const json& entry) const
{
    Loaded l;
    l.file = CheckpointFile::open(path(entry["file"].get<std::string>()));
    const ValueGraph& g = l.file->graph();
    l.scheduler = entry["scheduler_key"].is_null() ? l.file->root()
                                                    : g.get(l.file->root(), entry["scheduler_key"].get<std::string>());
    if (!entry["optimizer_key"].is_null())
        l.optimizer = g.get(l.file->root(), entry["optimizer_key"].get<std::string>());
    return l;
}

void TestLrSchedule::savedStates_data()
{
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < m_expected["files"].size(); ++i)
        QTest::newRow(m_expected["files"][i]["file"].get<std::string>().c_str()) << int(i);
}

void TestLrSchedule::savedStates()
{
    QFETCH(int, index);
    const json& e = m_expected["files"][index];
    const json& history = m_expected["runs"][e["run"].get<std::string>()]["history"];
    const int64_t position = e["position"];
    const Loaded l = load(e);
    QVERIFY(l.file->graph().valid(l.scheduler));

    const auto s = readLrSchedule(l.file->graph(), l.scheduler, l.optimizer);
    QVERIFY2(s.has_value(), "not recognised as a scheduler");
    QCOMPARE(s->kind, e["kind"].get<std::string>());
    QCOMPARE(s->lastEpoch, position);

    const std::vector<double> recorded = history[position];
    if (e["last_lr"].is_null()) {
        QVERIFY(s->lastLr.empty());
    } else {
        QCOMPARE(e["last_lr"].get<std::vector<double>>(), recorded);
        QCOMPARE(s->lastLr, recorded); // the same doubles
    }

    const bool recomputable = e["recomputable"];
    QVERIFY2(s->recomputable == recomputable, (s->kind + ": recomputable=" + std::to_string(s->recomputable) +
                                               " why=" + s->why).c_str());
    if (!recomputable) {
        QVERIFY2(!s->why.empty(), "no reason given");
        bool threw = false;
        try {
            (void)s->lrAt(position);
        } catch (const std::logic_error& ex) {
            threw = std::string(ex.what()).find(s->why) != std::string::npos;
        }
        QVERIFY2(threw, "lrAt must throw std::logic_error naming why");
        return;
    }
    QVERIFY2(s->why.empty(), s->why.c_str());
    QVERIFY2(s->warning.empty(), s->warning.c_str());
    QCOMPARE(s->baseLrs.size(), recorded.size());

    // one pass over the whole run, and a stretch inside it, give what lrAt gives position by position
    const auto series = s->lrSeries(0, static_cast<int64_t>(history.size()) - 1);
    QCOMPARE(series.size(), history.size());
    const auto stretch = s->lrSeries(5, 33);
    QCOMPARE(stretch.size(), std::size_t(29));
    for (std::size_t i = 0; i < stretch.size(); ++i)
        QCOMPARE(stretch[i], series[i + 5]);

    double& maxError = m_maxError[s->kind];
    for (std::size_t t = 0; t < history.size(); ++t) {
        const std::vector<double> expected = history[t];
        const std::vector<double> actual = s->lrAt(static_cast<int64_t>(t));
        QCOMPARE(actual, series[t]);
        QCOMPARE(actual.size(), expected.size());
        for (std::size_t g = 0; g < expected.size(); ++g) {
            const double err = relativeError(actual[g], expected[g]);
            maxError = std::max(maxError, err);
            ++m_checkedValues[s->kind];
            if (err > kTolerance)
                QFAIL(QString("position %1 group %2: lrAt %3, torch %4 (relative error %5)")
                          .arg(t).arg(g).arg(actual[g], 0, 'g', 17).arg(expected[g], 0, 'g', 17).arg(err)
                          .toUtf8().constData());
        }
    }
}

void TestLrSchedule::fields()
{
    auto read = [&](const std::string& name) {
        auto file = CheckpointFile::open(path(name));
        auto s = readLrSchedule(file->graph(), file->root());
        if (!s)
            throw std::runtime_error(name + " not recognised");
        return *s;
    };
    const LrSchedule step = read("step_7.pt");
    QCOMPARE(fieldOf(step, "step_size"), std::string("7"));
    QCOMPARE(fieldOf(step, "gamma"), std::string("0.5"));
    QCOMPARE(step.stepCount, int64_t(8));
    QCOMPARE(step.baseLrs, (std::vector<double>{0.1, 0.03}));
    QCOMPARE(fieldOf(read("multistep_7.pt"), "milestones"), std::string("[5, 12, 12, 40]"));

    const LrSchedule cos = read("onecycle_cos_30.pt");
    QCOMPARE(fieldOf(cos, "anneal"), std::string("cos"));
    QCOMPARE(fieldOf(cos, "max_lr"), std::string("[0.5, 0.2]"));
    QCOMPARE(fieldOf(cos, "total_steps"), std::string("60"));
    QCOMPARE(fieldOf(read("onecycle_linear_3phase_7.pt"), "anneal"), std::string("linear"));
    const LrSchedule newer = read("onecycle_cos_v24_7.pt");
    QVERIFY(!newer.recomputable);
    QVERIFY2(newer.why.find("optimizer") != std::string::npos, newer.why.c_str());

    const LrSchedule seq = read("sequential_30.pt");
    QCOMPARE(fieldOf(seq, "schedulers"), std::string("LinearLR, CosineAnnealingLR, ExponentialLR"));
    QCOMPARE(fieldOf(seq, "_milestones"), std::string("[10, 40]"));
    QCOMPARE(seq.children.size(), std::size_t(3));
    QCOMPARE(seq.children[1].lastEpoch, int64_t(20));
    QCOMPARE(seq.stepCount, int64_t(-1));

    const LrSchedule lambda = read("lambda_7.pt");
    QCOMPARE(fieldOf(lambda, "lr_lambdas"), std::string("[function (not saved), callable object {'every': 6}]"));
    QVERIFY(lambda.why.find("not saved") != std::string::npos);
    const LrSchedule plateau = read("plateau_30.pt");
    QCOMPARE(fieldOf(plateau, "mode"), std::string("'min'"));
    QCOMPARE(fieldOf(plateau, "best"), std::string("0.5"));
    QCOMPARE(fieldOf(read("plateau_0.pt"), "best"), std::string("inf"));
    QVERIFY(plateau.why.find("metric") != std::string::npos);
}

void TestLrSchedule::oneCycleStopsAtTotalSteps()
{
    auto file = CheckpointFile::open(path("onecycle_cos_7.pt"));
    const auto s = readLrSchedule(file->graph(), file->root());
    QVERIFY(s && s->recomputable);
    (void)s->lrAt(60); // total_steps itself is allowed (torch checks step_num > total_steps)
    bool threw = false;
    try {
        (void)s->lrAt(61);
    } catch (const std::out_of_range&) {
        threw = true;
    }
    QVERIFY(threw);
}

void TestLrSchedule::inconsistentLastLrWarns()
{
    auto file = CheckpointFile::open(path("exponential_30.pt"));
    ValueGraph g = file->graph();
    const NodeId lastLr = g.get(file->root(), "_last_lr");
    QVERIFY(g.valid(lastLr) && g[lastLr].items.size() == 2);
    g[g[lastLr].items[1]].f *= 1.5; // someone else changed group 1's LR
    const auto s = readLrSchedule(g, file->root());
    QVERIFY(s && s->recomputable);
    QVERIFY2(s->warning.find("differs") != std::string::npos, s->warning.c_str());
}

void TestLrSchedule::notSchedulers()
{
    ValueGraph g;
    const NodeId d = g.add(Kind::Dict);
    const NodeId key = g.addText(Kind::String, "gamma");
    const NodeId value = g.add(Node{.kind = Kind::Float, .f = 0.9});
    g[d].items = {key, value};
    QVERIFY(!readLrSchedule(g, d).has_value()); // a config dict, not a scheduler state
    QVERIFY(!readLrSchedule(g, key).has_value());
    QVERIFY(!readLrSchedule(g, kNoNode).has_value());
    QVERIFY(!readLrSchedule(g, 12345).has_value());

    // base_lrs + last_epoch with unknown keys: a scheduler of some kind
    const NodeId base = g.add(Kind::List);
    g[base].items = {value};
    g[d].items = {g.addText(Kind::String, "base_lrs"), base, g.addText(Kind::String, "last_epoch"), g.addInt(3),
                  g.addText(Kind::String, "warmup"), g.addInt(5)};
    const auto s = readLrSchedule(g, d);
    QVERIFY(s.has_value());
    QCOMPARE(s->kind, std::string("unknown"));
    QVERIFY(!s->recomputable && !s->why.empty());
    QCOMPARE(fieldOf(*s, "warmup"), std::string("5"));
}

void TestLrSchedule::hostileNesting()
{
    // a SequentialLR whose _schedulers holds itself: recursion must stop
    ValueGraph g;
    const NodeId d = g.add(Kind::Dict);
    const NodeId list = g.add(Kind::List);
    const NodeId milestones = g.add(Kind::List);
    g[milestones].items = {g.addInt(-5)};
    g[list].items = {d, d};
    g[d].items = {g.addText(Kind::String, "_schedulers"), list, g.addText(Kind::String, "_milestones"), milestones,
                  g.addText(Kind::String, "last_epoch"), g.addInt(1)};
    const auto s = readLrSchedule(g, d);
    QVERIFY(s.has_value());
    QCOMPARE(s->kind, std::string("SequentialLR"));
    QVERIFY(!s->recomputable);
}

void TestLrSchedule::cleanupTestCase()
{
    for (const auto& [kind, err] : m_maxError)
        qInfo("%-28s max relative error %.3g over %d LR values", kind.c_str(), err, m_checkedValues[kind]);
}

QTEST_GUILESS_MAIN(TestLrSchedule)
#include "tst_lr_schedule.moc"
