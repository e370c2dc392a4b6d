// SPDX-License-Identifier: MIT
#include "ui/jobstatus.h"

#include "ui/quietprogressbar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include <algorithm>

JobStatus::JobStatus(QWidget* parent)
    : QWidget(parent)
    , m_label(new QLabel(this))
    , m_bar(new QuietProgressBar(this))
    , m_cancel(new QToolButton(this))
{
    m_bar->setMaximumWidth(180);
    m_bar->setTextVisible(false);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop the background work (Esc); what has arrived stays"));
    m_cancel->setAutoRaise(true);
    connect(m_cancel, &QToolButton::clicked, this, &JobStatus::cancelRequested);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    hide();
}

void JobStatus::setProgress(const QString& job, int done, int total, const QString& what)
{
    auto it = std::find_if(m_jobs.begin(), m_jobs.end(), [&](const Job& j) { return j.id == job; });
    if (it == m_jobs.end())
        it = m_jobs.insert(m_jobs.end(), Job{job, what.isEmpty() ? job : what, 0, 0});
    if (!what.isEmpty())
        it->what = what;
    it->done = std::max(done, 0);
    it->total = std::max(total, 0);
    refresh();
}

void JobStatus::finish(const QString& job)
{
    std::erase_if(m_jobs, [&](const Job& j) { return j.id == job; });
    refresh();
}

void JobStatus::finishAll()
{
    m_jobs.clear();
    refresh();
}

QStringList JobStatus::jobs() const
{
    QStringList ids;
    for (const Job& job : m_jobs)
        ids.append(job.id);
    return ids;
}

QString JobStatus::text() const
{
    return m_label->text();
}

void JobStatus::refresh()
{
    if (m_jobs.empty()) {
        hide();
        m_label->clear();
        return;
    }
    // One bar for all: the units of every job summed; busy (no range) while a job has no total yet.
    int done = 0, total = 0;
    bool unknown = false;
    QStringList tips;
    for (const Job& job : m_jobs) {
        done += std::min(job.done, job.total);
        total += job.total;
        unknown = unknown || job.total == 0;
        tips.append(job.total ? tr("%1: %2 of %3").arg(job.what).arg(job.done).arg(job.total) : tr("%1: starting").arg(job.what));
    }
    const Job& latest = m_jobs.back();
    m_label->setText(m_jobs.size() == 1 ? latest.what : tr("%1 (+%n more)", nullptr, static_cast<int>(m_jobs.size()) - 1).arg(latest.what));
    m_bar->setRangeQuietly(0, unknown ? 0 : total);
    m_bar->setValueQuietly(unknown ? 0 : done);
    m_bar->setToolTip(tips.join(QLatin1Char('\n')));
    m_label->setToolTip(m_bar->toolTip());
    show();
}
