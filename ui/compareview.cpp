// SPDX-License-Identifier: MIT
#include "ui/backgroundpriority.h"
#include "ui/compareview.h"

#include "ckpt/compare/checkpoint_diff.h"

#include "ui/copyaction.h"
#include "ui/models/comparisonmodel.h"
#include "ui/models/findingsmodel.h"
#include "ui/models/tensordiffmodel.h"
#include "ui/tableview.h"
#include "ui/textformat.h"

#include <QCheckBox>
#include <QHash>
#include <QComboBox>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace {

// Chooser items carry (run id, checkpoint index) packed in one qint64.
qint64 key(int runId, int index)
{
    return (static_cast<qint64>(runId) << 32) | static_cast<quint32>(index);
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_chooserA(new QComboBox(this))
    , m_chooserB(new QComboBox(this))
    , m_differencesOnly(new QCheckBox(tr("Differences only"), this))
    , m_summary(new QLabel(this))
    , m_findings(new FindingsModel(this))
    , m_comparison(new ComparisonModel(this))
    , m_tensors(new TensorDiffModel(this))
{
    m_chooserA->setToolTip(tr("Checkpoint A: the earlier one, usually"));
    m_chooserB->setToolTip(tr("Checkpoint B"));
    m_chooserA->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_chooserB->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_chooserA, &QComboBox::currentIndexChanged, this, &CompareView::update);
    connect(m_chooserB, &QComboBox::currentIndexChanged, this, &CompareView::update);
    auto* swap = new QToolButton(this);
    swap->setText(tr("Swap"));
    swap->setToolTip(tr("Exchange A and B"));
    connect(swap, &QToolButton::clicked, this, [this] {
        const int a = m_chooserA->currentIndex(), b = m_chooserB->currentIndex();
        const QSignalBlocker blockA(m_chooserA);
        m_chooserA->setCurrentIndex(b);
        m_chooserB->setCurrentIndex(a); // updates once
    });
    m_differencesOnly->setToolTip(tr("Hide values that are the same in A and B"));
    // Differences first: one line per part of S_t with its count, expanded on demand
    m_differencesOnly->setChecked(true);
    m_comparison->setDifferencesOnly(true);
    connect(m_differencesOnly, &QCheckBox::toggled, this, [this](bool on) { m_comparison->setDifferencesOnly(on); });
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_findingsView = makeReadOnlyTable(m_findings);
    m_findingsView->setMaximumHeight(110);
    m_findingsView->horizontalHeader()->resizeSection(FindingsModel::Rule, 180);
    m_findingsView->horizontalHeader()->resizeSection(FindingsModel::Where, 200);

    m_comparisonView = new QTreeView;
    m_comparisonView->setObjectName(QStringLiteral("comparisonView"));
    m_comparisonView->setModel(m_comparison);
    m_comparisonView->setAlternatingRowColors(true);
    m_comparisonView->setUniformRowHeights(true);
    m_comparisonView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_comparisonView->setTextElideMode(Qt::ElideMiddle);
    m_comparisonView->header()->resizeSection(ComparisonModel::Field, 240);
    m_comparisonView->header()->resizeSection(ComparisonModel::A, 200);
    m_comparisonView->header()->resizeSection(ComparisonModel::B, 200);
    installCopyAction(m_comparisonView);

    m_tensorView = makeReadOnlyTable(m_tensors);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("A:")));
    top->addWidget(m_chooserA, 1);
    top->addWidget(swap);
    top->addWidget(new QLabel(tr("B:")));
    top->addWidget(m_chooserB, 1);
    auto* summary = new QHBoxLayout;
    summary->addWidget(m_summary, 1);
    summary->addWidget(m_differencesOnly);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_comparisonView);
    split->addWidget(m_tensorView);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->addLayout(top);
    layout->addLayout(summary);
    layout->addWidget(m_findingsView);
    layout->addWidget(split, 1);
}

void CompareView::setRuns(const std::vector<RunDataPtr>& runs)
{
    m_runs = runs;
    const QVariant keptA = m_chooserA->currentData(), keptB = m_chooserB->currentData();
    const QSignalBlocker blockA(m_chooserA), blockB(m_chooserB);
    m_chooserA->clear();
    m_chooserB->clear();
    for (const RunDataPtr& run : runs) {
        for (std::size_t i = 0; i < run->checkpoints.size(); ++i) {
            const RunCheckpointData& checkpoint = run->checkpoints[i];
            const auto step = checkpoint.step();
            QString text = run->name;
            if (!run->singleCheckpoint)
                text += QStringLiteral(" / ") + QFileInfo(fromUtf8(checkpoint.info.path)).fileName();
            if (step)
                text += tr("  (step %1)").arg(*step);
            const qint64 data = key(run->id, static_cast<int>(i));
            m_chooserA->addItem(text, data);
            m_chooserB->addItem(text, data);
        }
    }
    m_chooserA->setCurrentIndex(qMax(0, m_chooserA->findData(keptA)));
    m_chooserB->setCurrentIndex(qMax(0, m_chooserB->findData(keptB)));
    update();
}

void CompareView::compare(int runA, int indexA, int runB, int indexB)
{
    const QSignalBlocker blockA(m_chooserA), blockB(m_chooserB);
    m_chooserA->setCurrentIndex(m_chooserA->findData(key(runA, indexA)));
    m_chooserB->setCurrentIndex(m_chooserB->findData(key(runB, indexB)));
    update();
}

void CompareView::compareDefault(int runId)
{
    for (const RunDataPtr& run : m_runs) {
        if (run->id != runId)
            continue;
        const int latest = run->latestIndex();
        int a = run->bestIndex();
        if (a < 0 || a == latest)
            a = latest > 0 ? latest - 1 : latest;
        compare(runId, a, runId, latest);
        return;
    }
}

void CompareView::refresh()
{
    update();
}

bool CompareView::chosenA(int& runId, int& index) const
{
    const RunData* run = nullptr;
    const RunCheckpointData* a = checkpointAt(m_chooserA, &run);
    if (!a)
        return false;
    runId = run->id;
    index = static_cast<int>(a - run->checkpoints.data());
    return true;
}

const RunCheckpointData* CompareView::checkpointAt(const QComboBox* chooser, const RunData** runOut) const
{
    const QVariant data = chooser->currentData();
    if (!data.isValid())
        return nullptr;
    const int runId = static_cast<int>(data.toLongLong() >> 32);
    const int index = static_cast<int>(data.toLongLong() & 0xffffffff);
    for (const RunDataPtr& run : m_runs) {
        if (run->id == runId && index < static_cast<int>(run->checkpoints.size())) {
            if (runOut)
                *runOut = run.get();
            return &run->checkpoints[static_cast<std::size_t>(index)];
        }
    }
    return nullptr;
}

void CompareView::update()
{
    // Comparing two states (90k parameters in a frontier model) waits until the view is on screen:
    // MainWindow refreshes it whenever a run finishes loading, usually while Inspect is shown.
    if (!isVisible()) {
        m_updatePending = true;
        return;
    }
    m_updatePending = false;
    const RunData* runA = nullptr;
    const RunData* runB = nullptr;
    const RunCheckpointData* a = checkpointAt(m_chooserA, &runA);
    const RunCheckpointData* b = checkpointAt(m_chooserB, &runB);
    if (a && m_chooserA->currentData() != m_chosenA) {
        m_chosenA = m_chooserA->currentData();
        emit checkpointAChosen(runA->id, static_cast<int>(a - runA->checkpoints.data()));
    }
    std::vector<FindingRow> findings;
    auto addFindings = [&findings](const RunData* run, const RunCheckpointData* checkpoint) {
        const int index = static_cast<int>(checkpoint - run->checkpoints.data());
        for (const ckpt::Finding& finding : checkpoint->findings)
            findings.push_back({run->id, index, QFileInfo(fromUtf8(checkpoint->info.path)).fileName(), finding, run->folder()});
    };
    if (a)
        addFindings(runA, a);
    if (b && b != a)
        addFindings(runB, b);
    if (a && b && a->state && b->state) {
        StateComparison comparison = compareStates(*a->state, *b->state);
        // The inconsistencies are the pair's own findings until the rule catalogue provides them.
        for (const std::string& text : comparison.inconsistencies) {
            ckpt::Finding finding;
            finding.rule = "compare.inconsistent";
            finding.severity = ckpt::Severity::Warning;
            finding.component = ckpt::Component::Progress;
            finding.message = text;
            findings.insert(findings.begin(), {0, -1, tr("A → B"), finding, runA->folder()});
        }
        m_comparison->setComparison(std::move(comparison));
        m_tensors->setStates(a->state, b->state);
        startTensorDiff(fromUtf8(a->info.path), fromUtf8(b->info.path));
        int differ = 0;
        for (const CompareSection& section : m_comparison->comparison().sections) {
            for (const CompareRow& row : section.rows)
                differ += row.status != CompareStatus::Same;
        }
        const auto stepA = a->step(), stepB = b->step();
        m_summary->setText(tr("A: step %1 · B: step %2 · %n value(s) differ", nullptr, differ)
                               .arg(stepA ? QString::number(*stepA) : QStringLiteral("?"),
                                    stepB ? QString::number(*stepB) : QStringLiteral("?")));
    } else {
        m_comparison->setComparison({});
        m_tensors->setStates(nullptr, nullptr);
        startTensorDiff({}, {});
        m_summary->setText(!a || !b ? tr("Choose two checkpoints.")
                                    : tr("Reading the training states… (a checkpoint whose state cannot be read cannot be compared)"));
    }
    m_findings->setFindings(std::move(findings));
    m_findingsView->resizeColumnToContents(FindingsModel::Severity);
    m_findingsView->resizeColumnToContents(FindingsModel::Checkpoint);
    m_tensorView->resizeColumnsToContents();
}

CompareView::~CompareView()
{
    if (m_diffCancel)
        *m_diffCancel = true;
}

// The values are compared off the UI thread (a pass over both checkpoints' bytes); choosing
// another pair cancels the running comparison and drops its result.
void CompareView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_updatePending)
        update();
    if (m_pendingDiff) {
        const auto [a, b] = *m_pendingDiff;
        m_pendingDiff.reset();
        startTensorDiff(a, b);
    }
}

void CompareView::startTensorDiff(const QString& pathA, const QString& pathB)
{
    // Comparing every tensor byte of two checkpoints is only worth it when the view is on screen:
    // hidden, it competed with the Inspect view's listing and statistics for the cores.
    if (!isVisible()) {
        m_pendingDiff = std::make_pair(pathA, pathB);
        return;
    }
    m_pendingDiff.reset();
    using DiffPtr = std::shared_ptr<const ckpt::CheckpointDiff>;
    const QString key = pathA.isEmpty() || pathB.isEmpty() ? QString() : pathA + QLatin1Char('\n') + pathB;
    if (key == m_diffKey) { // the same pair: setStates() reset the rows, the values still hold
        if (m_diff)
            m_tensors->setDiff(*m_diff);
        return;
    }
    if (m_diffCancel)
        *m_diffCancel = true;
    m_diffKey = key;
    m_diff.reset();
    m_diffCancel.reset();
    if (key.isEmpty())
        return;
    auto cancel = std::make_shared<std::atomic_bool>(false);
    m_diffCancel = cancel;
    auto* watcher = new QFutureWatcher<DiffPtr>(this);
    connect(watcher, &QFutureWatcher<DiffPtr>::finished, this, [this, watcher, key] {
        watcher->deleteLater();
        DiffPtr diff = watcher->result();
        if (key != m_diffKey || !diff || diff->cancelled)
            return;
        m_diff = std::move(diff);
        m_tensors->setDiff(*m_diff);
        m_tensorView->resizeColumnsToContents();
        Q_EMIT tensorDiffAvailable();
    });
    watcher->setFuture(QtConcurrent::run([a = pathA.toStdString(), b = pathB.toStdString(), cancel]() -> DiffPtr {
        lowerThreadPriority();
        ckpt::StatsOptions options;
        options.threads = 1; // the UI's other background jobs keep the remaining cores
        options.progress = [cancel](const ckpt::StatsProgress&) { return !cancel->load(); };
        try {
            return std::make_shared<const ckpt::CheckpointDiff>(ckpt::diffCheckpoints(a, b, options));
        } catch (const std::exception&) {
            return nullptr; // an unreadable pair keeps the structural table
        }
    }));
}

bool CompareView::selectComponent(const QString& component)
{
    // ckpt::componentName -> the letter of S_t its section carries ("Grad scaler (A)")
    static const QHash<QString, QString> letter = {
        {QStringLiteral("data"), QStringLiteral("(D)")},      {QStringLiteral("model"), QStringLiteral("(W)")},
        {QStringLiteral("optimizer"), QStringLiteral("(O)")}, {QStringLiteral("scheduler"), QStringLiteral("(L)")},
        {QStringLiteral("scaler"), QStringLiteral("(A)")},    {QStringLiteral("rng"), QStringLiteral("(R)")},
        {QStringLiteral("progress"), QStringLiteral("(C)")},  {QStringLiteral("environment"), QStringLiteral("(E)")}};
    const QString suffix = letter.value(component);
    if (suffix.isEmpty())
        return false;
    for (int row = 0; row < m_comparison->rowCount(); ++row) {
        const QModelIndex index = m_comparison->index(row, ComparisonModel::Field);
        if (!index.data().toString().endsWith(suffix))
            continue;
        m_comparisonView->setCurrentIndex(index);
        m_comparisonView->expand(index);
        m_comparisonView->scrollTo(index, QAbstractItemView::PositionAtTop);
        return true;
    }
    return false;
}
