// SPDX-License-Identifier: MIT
#include "ui/checkpointview.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/checkpointloader.h"
#include "ui/errorpanel.h"
#include "ui/overviewpage.h"
#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/optimizerpage.h"
#include "ui/pages/rngpage.h"
#include "ui/pages/timelinepage.h"
#include "ui/pages/schedulepage.h"
#include "ui/rawpage.h"
#include "ui/textformat.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

namespace {

// The model file first: it is what Tensors is usually opened for.
int preferredFile(const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& files)
{
    for (std::size_t i = 0; i < files.size(); ++i) {
        const QString name = QFileInfo(fromUtf8(files[i]->path())).fileName();
        if (name.contains(QLatin1String("model")) || name.endsWith(QLatin1String(".safetensors")))
            return static_cast<int>(i);
    }
    return files.empty() ? -1 : 0;
}

} // namespace

CheckpointView::CheckpointView(QWidget* parent)
    : QWidget(parent)
    , m_loader(new CheckpointLoader(this))
    , m_title(new QLabel(this))
    , m_fileChooser(new QComboBox(this))
    , m_errors(new ErrorPanel(tr("Unreadable files of this checkpoint"), this))
    , m_tabs(new QTabWidget(this))
    , m_overview(new OverviewPage)
    , m_tensors(new CheckpointTensorsPage)
    , m_optimizer(new OptimizerPage)
    , m_schedule(new SchedulePage)
    , m_rng(new RngPage)
    , m_timeline(new TimelinePage)
    , m_raw(new RawPage)
{
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setObjectName(QStringLiteral("checkpointTitle"));
    m_fileChooser->setToolTip(tr("The file of this checkpoint that the Raw tab shows"));
    m_fileChooser->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_fileChooser, &QComboBox::currentIndexChanged, this, &CheckpointView::showFile);

    m_tabs->setDocumentMode(true);
    m_tabs->insertTab(OverviewTab, m_overview, tr("Overview"));
    m_tabs->insertTab(TensorsTab, m_tensors, tr("Tensors"));
    m_tabs->insertTab(OptimizerTab, m_optimizer, tr("Optimizer"));
    m_tabs->insertTab(ScheduleTab, m_schedule, tr("Schedule"));
    m_tabs->insertTab(RngTab, m_rng, tr("RNG && data"));
    m_tabs->insertTab(RawTab, m_raw, tr("Raw"));
    m_tabs->insertTab(TimelineTab, m_timeline, tr("Timeline"));
    m_tabs->setTabToolTip(TimelineTab, tr("The run on one step axis: loss, checkpoints, resume points and each part of S_t"));
    connect(m_timeline, &TimelinePage::compareRequested, this, &CheckpointView::compareRequested);
    connect(m_tabs, &QTabWidget::currentChanged, this, &CheckpointView::refreshPage);

    auto* top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(new QLabel(tr("File:")));
    top->addWidget(m_fileChooser);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->addLayout(top);
    layout->addWidget(m_errors);
    layout->addWidget(m_tabs, 1);

    connect(m_loader, &CheckpointLoader::loaded, this, &CheckpointView::onFileLoaded);
    connect(m_loader, &CheckpointLoader::started, this, [this](const QStringList& files) { m_fileBase = checkpointFileBase(m_path, files); });
    connect(m_loader, &CheckpointLoader::failed, this, [this](const QString& path, const QString& reason) {
        m_errors->addError(path == m_path ? QFileInfo(path).fileName() : nameInCheckpoint(m_fileBase, path), reason);
    });
    connect(m_loader, &CheckpointLoader::finished, this, &CheckpointView::filesLoaded);
    connect(m_tensors, &CheckpointTensorsPage::jobProgress, this, &CheckpointView::jobProgress);
    connect(m_tensors, &CheckpointTensorsPage::jobFinished, this, &CheckpointView::jobFinished);
    connect(m_optimizer, &OptimizerPage::jobProgress, this, &CheckpointView::jobProgress);
    connect(m_optimizer, &OptimizerPage::jobFinished, this, &CheckpointView::jobFinished);
    setCheckpoint(nullptr, -1);
}

CheckpointView::~CheckpointView() = default;

int CheckpointView::runId() const
{
    return m_run ? m_run->id : 0;
}

bool CheckpointView::isLoading() const
{
    return m_loader->isBusy() || m_tensors->isBusy() || m_tensors->isComputingStats() || m_optimizer->isComputingStats()
        || m_optimizer->isReadingHistory();
}

void CheckpointView::cancelBackgroundWork()
{
    m_tensors->cancel();
    m_optimizer->cancel();
}

void CheckpointView::updatePages()
{
    const auto state = m_run && m_index >= 0 ? m_run->checkpoints[static_cast<std::size_t>(m_index)].state : nullptr;
    if (state == m_pageState)
        return; // the pages' background work is not restarted for a refresh
    m_pageState = state;
    // Only the page on screen is filled now; the others when their tab is shown. Filling all four
    // on every click cost the GUI thread a frame, and started statistics nobody was looking at.
    m_tensors->cancel();
    m_optimizer->cancel();
    refreshPage(m_tabs->currentIndex());
}

void CheckpointView::refreshPage(int tab)
{
    if (tab == RawTab && !m_rawGiven) {
        m_raw->setFile(m_rawFile);
        m_rawGiven = true;
        return;
    }
    if (tab == TimelineTab) { // the run's, not the checkpoint's: redrawn when the run's check arrives
        m_timeline->setRun(m_run, m_index);
        return;
    }
    if (tab < TensorsTab || tab > RngTab || m_pageGiven[tab] == m_pageState)
        return;
    m_pageGiven[tab] = m_pageState;
    const auto history = m_pageState && m_run ? m_run->fullHistory : nullptr;
    switch (tab) {
    case TensorsTab:
        m_tensors->setCheckpoint(m_pageState, history);
        break;
    case OptimizerTab:
        m_optimizer->setCheckpoint(m_pageState, history);
        break;
    case ScheduleTab:
        m_schedule->setCheckpoint(m_pageState, history);
        break;
    case RngTab:
        m_rng->setCheckpoint(m_pageState, history);
        break;
    default:
        break;
    }
}

void CheckpointView::setCheckpoint(const RunDataPtr& run, int index)
{
    const bool valid = run && index >= 0 && index < static_cast<int>(run->checkpoints.size());
    const QString path = valid ? fromUtf8(run->checkpoints[static_cast<std::size_t>(index)].info.path) : QString();
    m_run = valid ? run : nullptr;
    m_index = valid ? index : -1;
    m_overview->setCheckpoint(m_run.get(), m_index);
    updatePages();
    if (m_tabs->currentIndex() == TimelineTab)
        m_timeline->setRun(m_run, m_index);
    if (path == m_path && valid) {
        loadFilesWhenReady(); // same checkpoint, more of its data arrived: its state maybe
        return;
    }
    m_path = path;
    m_title->setText(valid ? QDir::toNativeSeparators(path) : tr("Open a run, a checkpoint folder or a file (File menu), or drop it here."));
    m_errors->clear();
    m_files.clear();
    const QSignalBlocker block(m_fileChooser);
    m_fileChooser->clear();
    showFile(-1);
    m_filesRequested = false;
    m_loader->cancel(); // what the previous checkpoint's opens still deliver is dropped
    loadFilesWhenReady();
}

// The Raw tab's files. A checkpoint alone in its run gets a state that keeps the files its check
// parsed (RunLoader), so they wait for it and only the files it did not parse are opened here; a
// run's checkpoints, whose states keep none, are opened at once.
void CheckpointView::loadFilesWhenReady()
{
    if (m_filesRequested || !m_run || m_index < 0)
        return;
    const RunCheckpointData& c = m_run->checkpoints[static_cast<std::size_t>(m_index)];
    if (m_run->statesKeepFiles() && !c.state && c.stateError.isEmpty() && !c.scanned)
        return;
    m_filesRequested = true;
    const std::vector<std::shared_ptr<const ckpt::CheckpointFile>> parsed = c.state ? c.state->files
                                                                                    : std::vector<std::shared_ptr<const ckpt::CheckpointFile>>();
    // A DCP folder holds chunk files only: nothing there for the Raw tab, and nothing to report.
    if (CheckpointLoader::expandPaths({m_path}) != QStringList{m_path} || QFileInfo(m_path).isFile())
        m_loader->load(m_path, parsed); // a new batch: results of the previous checkpoint are dropped
}

void CheckpointView::onFileLoaded(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    // Keep the chooser in name order whatever order the opens finish in.
    const QString name = nameInCheckpoint(m_fileBase, fromUtf8(file->path()));
    int at = 0;
    while (at < m_fileChooser->count() && m_fileChooser->itemText(at) < name)
        ++at;
    m_files.insert(m_files.begin() + at, file);
    const bool dangerous = file->imports().anyDangerous() || file->imports().structuralDanger;
    const QSignalBlocker block(m_fileChooser);
    m_fileChooser->insertItem(at, dangerous ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon(), name);
    const int preferred = preferredFile(m_files);
    m_fileChooser->setCurrentIndex(preferred);
    showFile(preferred);
}

void CheckpointView::showFile(int comboIndex)
{
    const auto file = comboIndex >= 0 && comboIndex < static_cast<int>(m_files.size()) ? m_files[static_cast<std::size_t>(comboIndex)] : nullptr;
    // The Raw tab's object tree of a frontier model's index holds ~90k entries: it is built when the
    // tab is shown, not while the user looks at another tab.
    m_rawFile = file;
    m_rawGiven = false;
    if (m_tabs->currentIndex() == RawTab) {
        m_raw->setFile(file);
        m_rawGiven = true;
    }
    const bool dangerous = file && (file->imports().anyDangerous() || file->imports().structuralDanger);
    m_tabs->setTabIcon(RawTab, dangerous ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());
}

QStringList CheckpointView::tabNames()
{
    return {QStringLiteral("overview"), QStringLiteral("tensors"), QStringLiteral("optimizer"),
            QStringLiteral("schedule"), QStringLiteral("rng"), QStringLiteral("raw"), QStringLiteral("timeline")};
}

bool CheckpointView::focusFilter()
{
    QLineEdit* filter = nullptr;
    if (m_tabs->currentIndex() == TensorsTab)
        filter = m_tensors->filterEdit();
    else if (m_tabs->currentIndex() == OptimizerTab)
        filter = m_optimizer->filterEdit();
    if (!filter)
        return false;
    filter->setFocus(Qt::ShortcutFocusReason);
    filter->selectAll();
    return true;
}

bool CheckpointView::selectTab(const QString& name)
{
    const qsizetype index = tabNames().indexOf(name.toLower());
    if (index < 0)
        return false;
    m_tabs->setCurrentIndex(static_cast<int>(index));
    return true;
}

void CheckpointView::reveal(const ckpt::Finding& finding)
{
    if (finding.component == ckpt::Component::Security) {
        const QString name = nameInCheckpoint(m_fileBase, fromUtf8(finding.file));
        const int file = m_fileChooser->findText(name);
        if (file >= 0)
            m_fileChooser->setCurrentIndex(file);
        m_tabs->setCurrentIndex(RawTab);
        return;
    }
    m_tabs->setCurrentIndex(OverviewTab);
    if (!finding.file.empty() && m_overview->revealFile(fromUtf8(finding.file)))
        return;
    m_overview->revealFinding(finding);
}
