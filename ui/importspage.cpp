// SPDX-License-Identifier: MIT
#include "ui/importspage.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/copyaction.h"
#include "ui/models/importsmodel.h"
#include "ui/palettecolors.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

ImportsPage::ImportsPage(QWidget* parent)
    : QWidget(parent)
    , m_model(new ImportsModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_verdict(new QLabel(this))
    , m_view(new QTableView(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(ImportsModel::SortRole);

    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_view->setModel(m_proxy);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setTabKeyNavigation(false);
    installCopyAction(m_view);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(ImportsModel::Safety, Qt::AscendingOrder); // dangerous first, then unknown, then safe

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_verdict);
    layout->addWidget(m_view);
}

void ImportsPage::setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    m_model->setReport(file ? file->imports() : ckpt::ImportsReport{});
    m_view->resizeColumnsToContents();
    if (m_view->columnWidth(ImportsModel::Global) > 360)
        m_view->setColumnWidth(ImportsModel::Global, 360);

    const ckpt::ImportsReport& report = m_model->report();
    m_dangerous = report.anyDangerous() || report.structuralDanger;
    if (!file) {
        m_verdict->clear();
    } else if (report.entries.empty()) {
        m_verdict->setText(tr("This file references no Python globals (nothing to import when it is loaded)."));
    } else {
        const QString counts = tr("%1 dangerous, %2 unknown, %3 safe globals.")
                                   .arg(report.count(ckpt::ImportSafety::Dangerous))
                                   .arg(report.count(ckpt::ImportSafety::Unknown))
                                   .arg(report.count(ckpt::ImportSafety::Safe));
        const QString advice = m_dangerous
            ? tr("Do NOT load this file with torch.load(weights_only=False): unpickling it can run code.")
            : report.count(ckpt::ImportSafety::Unknown) > 0
            ? tr("torch.load(weights_only=True) will refuse the unknown globals; allowlist them only if you trust the file.")
            : tr("torch.load(weights_only=True) can load it.");
        m_verdict->setText(counts + QLatin1Char(' ') + advice);
    }
    updateVerdictColour();
}

void ImportsPage::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        updateVerdictColour();
    QWidget::changeEvent(event);
}

void ImportsPage::updateVerdictColour()
{
    QPalette palette = m_verdict->palette();
    palette.setColor(QPalette::WindowText, m_dangerous ? warningColor(this->palette()) : this->palette().color(QPalette::WindowText));
    m_verdict->setPalette(palette);
}
