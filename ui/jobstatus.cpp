// SPDX-License-Identifier: MIT
#include "ui/jobstatus.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

JobStatus::JobStatus(QWidget* parent)
    : QWidget(parent)
    , m_label(new QLabel(this))
    , m_bar(new QProgressBar(this))
    , m_cancel(new QToolButton(this))
{
    m_bar->setMaximumWidth(180);
    m_bar->setTextVisible(false);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop reading and auditing (Esc); what has arrived stays"));
    m_cancel->setAutoRaise(true);
    connect(m_cancel, &QToolButton::clicked, this, &JobStatus::cancelRequested);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    hide();
}

void JobStatus::setProgress(int done, int total, const QString& what)
{
    if (!what.isEmpty())
        m_label->setText(what);
    m_bar->setRange(0, qMax(total, 0));
    m_bar->setValue(done);
    m_bar->setToolTip(tr("%1 of %2 checkpoints and audits").arg(done).arg(total));
    show();
}

void JobStatus::finish()
{
    hide();
    m_label->clear();
}
