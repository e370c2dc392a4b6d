// SPDX-License-Identifier: MIT
#include "ui/overviewpage.h"

#include "ui/copyaction.h"
#include "ui/models/checkpointfilesmodel.h"
#include "ui/models/findingsmodel.h"
#include "ui/models/statefieldsmodel.h"
#include "ui/tableview.h"
#include "ui/textformat.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace {

QWidget* titled(const QString& title, QWidget* content)
{
    auto* box = new QWidget;
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->setSpacing(2);
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()));
    layout->addWidget(label);
    layout->addWidget(content, 1);
    return box;
}

QString summaryText(const RunData& run, const RunCheckpointData& checkpoint)
{
    QStringList parts;
    parts.append(QStringLiteral("<b>%1</b>").arg(QFileInfo(fromUtf8(checkpoint.info.path)).fileName().toHtmlEscaped()));
    const auto step = checkpoint.step();
    parts.append(step ? OverviewPage::tr("step %1").arg(*step) : OverviewPage::tr("step unknown"));
    parts.append(OverviewPage::tr("layout %1").arg(QLatin1String(ckpt::layoutName(checkpoint.info.layout))));
    if (checkpoint.info.latest)
        parts.append(OverviewPage::tr("latest (%1)").arg(fromUtf8(run.history.latestFrom).toHtmlEscaped()));
    if (checkpoint.info.best)
        parts.append(OverviewPage::tr("best"));
    if (!checkpoint.info.complete)
        parts.append(OverviewPage::tr("<b>incomplete</b>: %1").arg(fromUtf8(checkpoint.info.incompleteReason).toHtmlEscaped()));
    if (!checkpoint.scanned)
        parts.append(OverviewPage::tr("reading…"));
    else if (!checkpoint.stateError.isEmpty())
        parts.append(OverviewPage::tr("<b>unreadable</b>: %1").arg(checkpoint.stateError.toHtmlEscaped()));
    if (!run.audited && !run.auditNote.isEmpty())
        parts.append(OverviewPage::tr("not audited: %1").arg(run.auditNote.toHtmlEscaped()));
    QString text = parts.join(QStringLiteral(" · "));
    // The checkpoint's verdict first thing under its name, as ckpt check opens with it.
    if (checkpoint.scanned && checkpoint.stateError.isEmpty())
        text += QStringLiteral("<br>") + verdictText(checkpoint.findings, 1).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    return text;
}

} // namespace

OverviewPage::OverviewPage(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_files(new CheckpointFilesModel(this))
    , m_fields(new StateFieldsModel(this))
    , m_findings(new FindingsModel(this))
{
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* filesProxy = new QSortFilterProxyModel(this);
    filesProxy->setSourceModel(m_files);
    filesProxy->setSortRole(CheckpointFilesModel::SortRole);
    m_filesView = makeReadOnlyTable(filesProxy, this);
    m_filesView->setSortingEnabled(true);
    m_filesView->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // layout order until clicked

    m_fieldsView = new QTreeView(this);
    m_fieldsView->setModel(m_fields);
    m_fieldsView->setAlternatingRowColors(true);
    m_fieldsView->setUniformRowHeights(true);
    m_fieldsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_fieldsView->header()->resizeSection(StateFieldsModel::Name, 200);
    m_fieldsView->header()->resizeSection(StateFieldsModel::Value, 220);
    installCopyAction(m_fieldsView);
    connect(m_fields, &QAbstractItemModel::modelReset, m_fieldsView, [this] {
        m_fieldsView->expandAll();
        // Names carry their file when repeated ("sampler.position (rng-rank-3.pt)"): keep that readable.
        m_fieldsView->resizeColumnToContents(StateFieldsModel::Name);
        m_fieldsView->setColumnWidth(StateFieldsModel::Name, qBound(200, m_fieldsView->columnWidth(StateFieldsModel::Name), 320));
    });

    m_findingsView = makeReadOnlyTable(m_findings, this);
    m_findingsView->horizontalHeader()->resizeSection(FindingsModel::Rule, 180);
    m_findingsView->horizontalHeader()->resizeSection(FindingsModel::Where, 200);

    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(titled(tr("Files"), m_filesView));
    right->addWidget(titled(tr("Findings"), m_findingsView));
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(right);
    split->addWidget(titled(tr("Counters, data cursor, environment"), m_fieldsView));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
}

void OverviewPage::setCheckpoint(const RunData* run, int index)
{
    const RunCheckpointData* checkpoint =
        run && index >= 0 && index < static_cast<int>(run->checkpoints.size()) ? &run->checkpoints[static_cast<std::size_t>(index)] : nullptr;
    m_summary->setText(checkpoint ? summaryText(*run, *checkpoint) : QString());
    m_files->setCheckpoint(checkpoint, run && run->audited, run ? run->auditNote : QString());
    m_fields->setState(checkpoint ? checkpoint->state : nullptr);
    std::vector<FindingRow> rows;
    if (checkpoint) {
        const QString name = QFileInfo(fromUtf8(checkpoint->info.path)).fileName();
        for (const ckpt::Finding& finding : checkpoint->findings)
            rows.push_back({run->id, index, name, finding, run->folder()});
    }
    m_findings->setFindings(std::move(rows));
    m_filesView->resizeColumnsToContents();
    m_findingsView->resizeColumnToContents(FindingsModel::Severity);
    m_findingsView->resizeColumnToContents(FindingsModel::Component);
}

bool OverviewPage::revealFile(const QString& path)
{
    const int row = m_files->rowOfPath(path);
    if (row < 0)
        return false;
    auto* proxy = static_cast<QSortFilterProxyModel*>(m_filesView->model());
    const QModelIndex index = proxy->mapFromSource(m_files->index(row, 0));
    m_filesView->setCurrentIndex(index);
    m_filesView->scrollTo(index);
    return true;
}

bool OverviewPage::revealFinding(const ckpt::Finding& finding)
{
    for (int row = 0; row < m_findings->rowCount(); ++row) {
        const ckpt::Finding& candidate = m_findings->rowAt(row).finding;
        if (candidate.rule == finding.rule && candidate.file == finding.file && candidate.message == finding.message) {
            m_findingsView->setCurrentIndex(m_findings->index(row, 0));
            m_findingsView->scrollTo(m_findings->index(row, 0));
            return true;
        }
    }
    return false;
}
