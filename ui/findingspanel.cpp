// SPDX-License-Identifier: MIT
#include "ui/findingspanel.h"

#include "ui/copyaction.h"
#include "ui/tableview.h"

#include "ui/models/findingsproxymodel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

FindingsPanel::FindingsPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new FindingsModel(this))
    , m_proxy(new FindingsProxyModel(this))
    , m_severity(new QComboBox(this))
    , m_component(new QComboBox(this))
    , m_count(new QLabel(this))
    , m_view(new QTreeView(this))
{
    m_model->setGrouped(true);
    m_proxy->setSourceModel(m_model);

    m_severity->addItem(tr("All severities"), 0);
    m_severity->addItem(tr("Warnings and errors"), 1);
    m_severity->addItem(tr("Errors only"), 2);
    m_severity->setToolTip(tr("Show findings of at least this severity"));
    connect(m_severity, &QComboBox::currentIndexChanged, this, [this] {
        m_proxy->setMinimumSeverity(m_severity->currentData().toInt());
        updateCount();
    });
    m_component->addItem(tr("All components"), -1);
    for (int c = 0; c <= static_cast<int>(ckpt::Component::Security); ++c)
        m_component->addItem(QLatin1String(ckpt::componentName(static_cast<ckpt::Component>(c))), c);
    m_component->setToolTip(tr("Show findings about one part of the training state"));
    connect(m_component, &QComboBox::currentIndexChanged, this, [this] {
        m_proxy->setComponent(m_component->currentData().toInt());
        updateCount();
    });

    m_view->setObjectName(QStringLiteral("findingsView"));
    m_view->setModel(m_proxy);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setWordWrap(false);
    m_view->setUniformRowHeights(true); // a run's hundreds of rows lay out without measuring each
    m_view->header()->setStretchLastSection(true);
    m_view->setTabKeyNavigation(false);
    installCopyAction(m_view);
    m_view->setSortingEnabled(true);
    // Worst first; within a severity, the order they were found in (the proxy's sort is stable).
    m_view->sortByColumn(FindingsModel::Severity, Qt::DescendingOrder);
    // Fitting a column to all of a run's hundreds of findings would stall the UI on each update:
    // the rows on screen and a few around them are enough for severity, component and checkpoint.
    m_view->header()->setResizeContentsPrecision(32);
    m_view->header()->resizeSection(FindingsModel::Rule, 200);
    m_view->header()->resizeSection(FindingsModel::Where, 260);
    auto activate = [this](const QModelIndex& index) {
        const QModelIndex source = m_proxy->mapToSource(index);
        const FindingRow& first = m_model->rowAt(source);
        emit findingActivated(first);
        const auto members = m_model->membersOf(source);
        if (members.size() < 2)
            return;
        QList<int> checkpoints;
        for (const FindingRow* m : members) {
            if (m->checkpointIndex >= 0 && !checkpoints.contains(m->checkpointIndex))
                checkpoints.append(m->checkpointIndex);
        }
        emit groupActivated(first.runId, checkpoints);
    };
    connect(m_view, &QTreeView::activated, this, activate);
    connect(m_view, &QTreeView::clicked, this, activate);

    auto* top = new QHBoxLayout;
    top->addWidget(m_severity);
    top->addWidget(m_component);
    top->addWidget(m_count, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    updateCount();
}

void FindingsPanel::setFindings(std::vector<FindingRow> rows)
{
    m_model->setFindings(std::move(rows));
    m_view->resizeColumnToContents(FindingsModel::Severity);
    m_view->resizeColumnToContents(FindingsModel::Component);
    m_view->resizeColumnToContents(FindingsModel::Checkpoint);
    m_view->setColumnWidth(FindingsModel::Checkpoint, qMin(m_view->columnWidth(FindingsModel::Checkpoint), 320));
    updateCount();
}

void FindingsPanel::updateCount()
{
    // Findings, not rows: a group row stands for all of its instances, and a pair's finding listed
    // under both of its checkpoints is one (as ckpt check counts it).
    auto findings = [](const QAbstractItemModel* model) {
        int n = 0;
        for (int row = 0; row < model->rowCount(); ++row)
            n += model->index(row, 0).data(FindingsModel::FindingCountRole).toInt();
        return n;
    };
    const int shown = findings(m_proxy), total = findings(m_model), groups = m_proxy->rowCount();
    m_count->setText((shown == total ? tr("%n finding(s)", nullptr, total) : tr("%1 of %2 findings").arg(shown).arg(total))
                     + tr(" in %n group(s)", nullptr, groups));
}
