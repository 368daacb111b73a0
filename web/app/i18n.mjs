// Every string of the page, in Chinese and English. t('key', {n: 3}) fills {n}. The language
// comes from the switch (kept in localStorage), else from navigator.language. Strings are never
// cut by the code: long text is clipped by CSS (text-overflow), which never splits a character.

const DICT = {
  en: {
    'title': 'Rota · GPU calendar and queue',
    'nav.label': 'Pages', 'lang.label': 'Language', 'loading': 'Loading…',
    'tab.calendar': 'Calendar', 'tab.now': 'GPUs now', 'tab.queue': 'Queue & my jobs', 'tab.usage': 'Usage', 'tab.rules': 'Rules',
    'role.admin': 'admin', 'mode.user': 'personal daemon (user mode)',
    'error.load': 'This page could not be loaded:', 'error.unreachable': 'The server cannot be reached.',
    'auth.title': 'Sign in to Rota', 'auth.logout': 'Sign out',
    'auth.link_intro': 'Open a terminal on the GPU server (for example with SSH) and run:',
    'auth.link_then': 'It prints a one-time link. Open that link in this browser and you are signed in as your server account.',
    'auth.password_title': 'Or sign in with your server password', 'auth.user': 'User name', 'auth.password': 'Password',
    'auth.sign_in': 'Sign in', 'auth.password_wrong': 'Wrong user name or password.',
    'auth.password_unavailable': 'Password sign-in is not available on this server; use the `rota web` link.',
    'auth.expired': 'You are signed out (the session ended). Sign in again.',
    'dur.d': '{n}d', 'dur.h': '{n}h', 'dur.m': '{n}m',
    'tier.regular': 'regular', 'tier.thesis': 'thesis/deadline', 'tier.explore': 'explore',
    'bstate.requested': 'waiting for approval', 'bstate.confirmed': 'confirmed', 'bstate.active': 'active',
    'bstate.ended': 'ended', 'bstate.released': 'released', 'bstate.no_show': 'no-show', 'bstate.overrun': 'overrun',
    'bstate.rejected': 'rejected', 'bstate.cancelled': 'cancelled',
    'cal.prev': 'Previous week', 'cal.next': 'Next week', 'cal.today': 'This week', 'cal.new': 'New booking',
    'cal.week_of': 'Week {from} – {to}', 'cal.grid_label': 'Booking calendar: GPUs down, days across',
    'cal.no_gpus': 'This server reports no GPUs.', 'cal.not_placed': 'not placed', 'cal.share': 'share',
    'cal.pending_title': 'Waiting for your approval ({n})', 'cal.reason': 'Reason (required to reject)',
    'cal.approve': 'Approve', 'cal.reject': 'Reject', 'cal.reject_needs_reason': 'Give a reason to reject.',
    'cal.approved': 'Booking {id} approved.', 'cal.rejected': 'Booking {id} rejected.',
    'cal.mine': 'My bookings this week', 'cal.zoom': 'Zoom', 'cal.zoom_in': 'Show fewer hours, larger', 'cal.zoom_out': 'Show more hours, smaller', 'cal.export_csv': 'Export week (CSV)', 'cal.export_ics': 'Export week (iCalendar)', 'cal.import_csv': 'Import CSV…',
    'cal.import_errors': 'Some rows were not imported:', 'cal.line': 'line {n}:', 'cal.imported': '{n} booking(s) imported.',
    'cal.hint': 'Click or drag on free time to book; Tab to a booking and press Enter for details.',
    'form.title': 'Book GPU time', 'form.kind': 'What to book', 'form.kind_card': 'This card (whole)',
    'form.kind_any': 'Any free cards', 'form.kind_mem': 'A memory share of a card', 'form.kind_mig': 'A MIG slice',
    'form.card': 'Card', 'form.count': 'Number of cards', 'form.mem_gib': 'Memory (GiB)', 'form.profile': 'MIG profile',
    'form.start': 'From', 'form.end': 'Until', 'form.tier': 'Priority',
    'form.tier_hint': 'thesis/deadline bookings over others need an admin', 'form.project': 'Project', 'form.note': 'Note',
    'form.note_hint': 'e.g. inference only', 'form.check': 'Check first', 'form.submit': 'Request booking',
    'form.free_starts': 'Free starts nearby:', 'form.would_confirm': 'Allowed: it would be confirmed ({h} GPU-hours).',
    'form.would_need_admin': 'It would wait for an admin: {why}',
    'form.booked': 'Booked ({id}): {cards}.', 'form.booked_requested': 'Requested ({id}); an admin decides: {why}',
    'det.title': 'Booking {id}', 'det.owner': 'Owner', 'det.state': 'State', 'det.cards': 'GPUs', 'det.time': 'Time',
    'det.actual_end': 'Actual end', 'det.gpu_hours': 'GPU-hours', 'det.decided': 'Decision', 'det.history': 'History',
    'det.cancel': 'Cancel booking', 'det.release': 'Release now', 'det.extend': 'Extend', 'det.extend_by': 'Extend by',
    'det.cancelled': 'Booking {id} cancelled.', 'det.released': 'Booking {id} released.', 'det.extended': 'Booking {id} extended.',
    'now.title': 'GPUs now', 'now.sampled': 'Sampled at {at}',
    'gpu.util': 'GPU', 'gpu.temp': 'Temp', 'gpu.power': 'Power', 'gpu.mem': 'Memory', 'gpu.nobody': 'Nobody is on this card.',
    'gpu.state_free': 'free', 'gpu.state_busy': 'in use', 'gpu.state_drained': 'drained', 'gpu.state_suspect': 'suspect',
    'gpu.drained': 'drained (no new work)', 'gpu.suspect': 'suspect: the last sample failed',
    'gpu.outside': 'process {pid} of {user} runs outside Rota ({mem})',
    'gpu.held_slurm': 'held by Slurm job {job} of {user}, outside Rota',
    'gpu.held_outside': 'held by a Slurm job outside Rota',
    'gpu.unallocated': 'process {pid} of {user} (job {job}) is on a card its job does not hold',
    'gpu.idle': 'allocated, {util}% utilisation now', 'gpu.stuck': 'memory held but nothing computed ({util}%): stuck?',
    'gpu.ecc': '{n} uncorrected ECC errors', 'gpu.processes': 'Processes on the card', 'gpu.of_job': 'job {job}',
    'queue.title': 'Queue & my jobs', 'queue.mine_only': 'Only my jobs', 'queue.empty': 'No jobs are waiting or running.',
    'job.id': 'Job', 'job.name': 'Name', 'job.user': 'User', 'job.state': 'State', 'job.request': 'Asks for',
    'job.when': 'Time left / why waiting', 'job.n_gpus': '{n} GPU(s)', 'job.left': '{d} left',
    'job.interactive': 'interactive', 'job.stopping': 'stopping…', 'job.waiting': 'waiting',
    'job.expected': 'expected start {at}', 'job.estimated': '(estimate)', 'job.unknown_start': 'start time unknown',
    'job.protected': 'next in line', 'job.protected_why': 'It waited past the lab\'s bound: first in line within its tier, and nothing submitted later may delay it',
    'job.logs': 'Logs', 'job.cancel': 'Cancel', 'job.cancel_confirm': 'Cancel job {id} ({name})?', 'job.cancelled': 'Job {id} cancelled.',
    'jstate.pending': 'pending', 'jstate.running': 'running', 'jstate.completed': 'completed', 'jstate.failed': 'failed',
    'jstate.cancelled': 'cancelled', 'jstate.timeout': 'timeout', 'jstate.preempted': 'preempted', 'jstate.node_fail': 'node failure',
    'reason.resources': 'waiting for free GPUs', 'reason.priority': 'higher-priority jobs first', 'reason.quota': 'over the weekly quota',
    'reason.dependency': 'waiting for another job', 'reason.booking': 'the GPUs are booked', 'reason.peak_hours': 'peak hours',
    'reason.impossible': 'can never fit on this server', 'reason.start_retry': 'starting again shortly (its start could not be recorded)',
    'logs.title': 'Logs of job {id} ({name})', 'logs.done': 'finished', 'logs.following': 'following…',
    'submit.title': 'Submit a job', 'submit.command': 'Command', 'submit.command_hint': 'Runs as you, in the working directory, with only the GPUs it is given.',
    'submit.cwd': 'Working directory', 'submit.cwd_absolute': 'The working directory must be a full path starting with /.',
    'submit.kind': 'GPUs', 'submit.kind_gpus': 'Whole GPUs', 'submit.kind_mem': 'A memory share', 'submit.kind_mig': 'A MIG slice',
    'submit.gpus': 'How many', 'submit.mem_gib': 'Memory (GiB)', 'submit.hours': 'Time limit (hours)',
    'submit.submit': 'Submit', 'submit.done': 'Job {id} submitted.',
    'submit.deadline': 'Deadline (optional)', 'submit.deadline_hint': 'When you need the results (a date alone is the end of that day). Rota advise warns when the job may miss it; it changes no priority.',
    'submit.image': 'Container image (optional)', 'submit.image_hint': 'Runs the command in this image, as you, with only its GPUs. The Rules tab lists the images the lab allows.',
    'usage.title': 'Usage', 'usage.unavailable': 'Usage statistics are not available on this server yet.',
    'rules.title': "The lab's rules", 'rules.unavailable': 'This server does not describe its rules yet.',
    'usage.avg_wait': 'Average wait', 'usage.util': 'Utilisation of allocated GPUs', 'usage.idle_hours': 'Idle GPU-hours',
    'usage.no_shows': 'No-shows', 'usage.overruns': 'Overruns', 'usage.week_from': 'This week began {at}.',
    'usage.users': 'People', 'usage.projects': 'Projects', 'usage.user': 'User', 'usage.week_hours': 'GPU-hours this week / quota',
    'usage.pool': 'From the project pool', 'usage.jobs': 'Jobs', 'usage.over_days': 'The last four weeks',
    'usage.chart_hours': 'GPU-hours per day, by person', 'usage.chart_wait': 'Average wait (hours) and utilisation (%) per day',
    'usage.gpu_hours': 'GPU-hours', 'usage.util_short': 'Utilisation', 'usage.others': 'others', 'usage.wait_h': 'hours', 'usage.day': 'Day',
    'usage.no_days': 'No history yet.', 'usage.no_charts': 'Charts are not installed (npm ci --prefix web); the numbers:',
  },
  zh: {
    'title': 'Rota · GPU 预约与队列',
    'nav.label': '页面', 'lang.label': '语言', 'loading': '加载中…',
    'tab.calendar': '预约日历', 'tab.now': 'GPU 实况', 'tab.queue': '队列与我的任务', 'tab.usage': '用量统计', 'tab.rules': '规则',
    'role.admin': '管理员', 'mode.user': '个人守护进程（用户模式）',
    'error.load': '页面无法加载：', 'error.unreachable': '无法连接服务器。',
    'auth.title': '登录 Rota', 'auth.logout': '退出',
    'auth.link_intro': '在 GPU 服务器上打开终端（例如通过 SSH），运行：',
    'auth.link_then': '它会打印一个一次性链接。在本浏览器中打开该链接，即以你的服务器账号登录。',
    'auth.password_title': '或用服务器密码登录', 'auth.user': '用户名', 'auth.password': '密码',
    'auth.sign_in': '登录', 'auth.password_wrong': '用户名或密码错误。',
    'auth.password_unavailable': '本服务器不支持密码登录，请使用 `rota web` 链接。',
    'auth.expired': '你已退出登录（会话已结束），请重新登录。',
    'dur.d': '{n}天', 'dur.h': '{n}小时', 'dur.m': '{n}分',
    'tier.regular': '常规', 'tier.thesis': '论文/截稿', 'tier.explore': '探索学习',
    'bstate.requested': '待审批', 'bstate.confirmed': '已确认', 'bstate.active': '使用中',
    'bstate.ended': '已结束', 'bstate.released': '已释放', 'bstate.no_show': '未使用（爽约）', 'bstate.overrun': '超时',
    'bstate.rejected': '已拒绝', 'bstate.cancelled': '已取消',
    'cal.prev': '上一周', 'cal.next': '下一周', 'cal.today': '本周', 'cal.new': '新建预约',
    'cal.week_of': '{from} – {to} 这一周', 'cal.grid_label': '预约日历：纵向为 GPU，横向为日期',
    'cal.no_gpus': '本服务器没有报告任何 GPU。', 'cal.not_placed': '未分配', 'cal.share': '共享',
    'cal.pending_title': '等待你审批的预约（{n}）', 'cal.reason': '理由（拒绝时必填）',
    'cal.approve': '批准', 'cal.reject': '拒绝', 'cal.reject_needs_reason': '拒绝时请填写理由。',
    'cal.approved': '预约 {id} 已批准。', 'cal.rejected': '预约 {id} 已拒绝。',
    'cal.mine': '我本周的预约', 'cal.zoom': '缩放', 'cal.zoom_in': '放大（显示更少的小时）', 'cal.zoom_out': '缩小（显示更多的小时）', 'cal.export_csv': '导出本周（CSV）', 'cal.export_ics': '导出本周（iCalendar）', 'cal.import_csv': '导入 CSV…',
    'cal.import_errors': '以下行未导入：', 'cal.line': '第 {n} 行：', 'cal.imported': '已导入 {n} 条预约。',
    'cal.hint': '在空闲时间上点击或拖动即可预约；用 Tab 选中预约后按回车查看详情。',
    'form.title': '预约 GPU 时间', 'form.kind': '预约什么', 'form.kind_card': '这张卡（整卡）',
    'form.kind_any': '任意空闲的卡', 'form.kind_mem': '一张卡的部分显存', 'form.kind_mig': 'MIG 切片',
    'form.card': '卡', 'form.count': '卡数', 'form.mem_gib': '显存（GiB）', 'form.profile': 'MIG 规格',
    'form.start': '开始', 'form.end': '结束', 'form.tier': '优先级',
    'form.tier_hint': '论文/截稿级预约若占用他人时段，需管理员审批', 'form.project': '项目', 'form.note': '备注',
    'form.note_hint': '例如：仅推理', 'form.check': '先检查', 'form.submit': '提交预约',
    'form.free_starts': '附近的空闲开始时间：', 'form.would_confirm': '符合规则：将直接确认（{h} GPU·小时）。',
    'form.would_need_admin': '需要管理员审批：{why}',
    'form.booked': '已预约（{id}）：{cards}。', 'form.booked_requested': '已提交申请（{id}），由管理员审批：{why}',
    'det.title': '预约 {id}', 'det.owner': '预约人', 'det.state': '状态', 'det.cards': 'GPU', 'det.time': '时间',
    'det.actual_end': '实际结束', 'det.gpu_hours': 'GPU·小时', 'det.decided': '决定', 'det.history': '历史记录',
    'det.cancel': '取消预约', 'det.release': '立即释放', 'det.extend': '延长', 'det.extend_by': '延长多久',
    'det.cancelled': '预约 {id} 已取消。', 'det.released': '预约 {id} 已释放。', 'det.extended': '预约 {id} 已延长。',
    'now.title': 'GPU 实况', 'now.sampled': '采样时间 {at}',
    'gpu.util': '利用率', 'gpu.temp': '温度', 'gpu.power': '功耗', 'gpu.mem': '显存', 'gpu.nobody': '这张卡上没有人。',
    'gpu.state_free': '空闲', 'gpu.state_busy': '使用中', 'gpu.state_drained': '已停用', 'gpu.state_suspect': '疑似故障',
    'gpu.drained': '已停用（不接新任务）', 'gpu.suspect': '疑似故障：上次采样失败',
    'gpu.outside': '{user} 的进程 {pid} 未经 Rota 运行（{mem}）',
    'gpu.held_slurm': '被 {user} 的 Slurm 作业 {job} 占用（未经 Rota）',
    'gpu.held_outside': '被未经 Rota 的 Slurm 作业占用',
    'gpu.unallocated': '{user} 的进程 {pid}（任务 {job}）运行在未分配给它的卡上',
    'gpu.idle': '已分配，当前利用率 {util}%', 'gpu.stuck': '占着显存却没有计算（{util}%）：是否卡住了？',
    'gpu.ecc': '{n} 个不可纠正的 ECC 错误', 'gpu.processes': '卡上的进程', 'gpu.of_job': '任务 {job}',
    'queue.title': '队列与我的任务', 'queue.mine_only': '只看我的任务', 'queue.empty': '没有排队或运行中的任务。',
    'job.id': '任务', 'job.name': '名称', 'job.user': '用户', 'job.state': '状态', 'job.request': '申请资源',
    'job.when': '剩余时间 / 等待原因', 'job.n_gpus': '{n} 张 GPU', 'job.left': '剩余 {d}',
    'job.interactive': '交互式', 'job.stopping': '正在停止…', 'job.waiting': '等待中',
    'job.expected': '预计 {at} 开始', 'job.estimated': '（估计）', 'job.unknown_start': '开始时间未知',
    'job.protected': '下一个轮到', 'job.protected_why': '已等待超过实验室规定的上限：在同一优先级中排在最前，之后提交的任务不能再推迟它',
    'job.logs': '日志', 'job.cancel': '取消', 'job.cancel_confirm': '取消任务 {id}（{name}）？', 'job.cancelled': '任务 {id} 已取消。',
    'jstate.pending': '排队中', 'jstate.running': '运行中', 'jstate.completed': '已完成', 'jstate.failed': '失败',
    'jstate.cancelled': '已取消', 'jstate.timeout': '超时', 'jstate.preempted': '被抢占', 'jstate.node_fail': '节点故障',
    'reason.resources': '等待空闲 GPU', 'reason.priority': '优先级更高的任务在前', 'reason.quota': '超出每周配额',
    'reason.dependency': '等待另一个任务', 'reason.booking': 'GPU 已被预约', 'reason.peak_hours': '高峰时段',
    'reason.impossible': '本服务器永远无法满足', 'reason.start_retry': '未能记录启动，稍后重试',
    'logs.title': '任务 {id}（{name}）的日志', 'logs.done': '已结束', 'logs.following': '持续更新中…',
    'submit.title': '提交任务', 'submit.command': '命令', 'submit.command_hint': '以你的身份、在工作目录中运行，只能使用分配给它的 GPU。',
    'submit.cwd': '工作目录', 'submit.cwd_absolute': '工作目录必须是以 / 开头的完整路径。',
    'submit.kind': 'GPU', 'submit.kind_gpus': '整卡', 'submit.kind_mem': '部分显存', 'submit.kind_mig': 'MIG 切片',
    'submit.gpus': '几张', 'submit.mem_gib': '显存（GiB）', 'submit.hours': '时间上限（小时）',
    'submit.submit': '提交', 'submit.done': '任务 {id} 已提交。',
    'submit.deadline': '截止时间（可选）', 'submit.deadline_hint': '什么时候需要结果（只写日期表示当天结束）。作业可能赶不上时，rota advise 会提醒；不改变优先级。',
    'submit.image': '容器镜像（可选）', 'submit.image_hint': '在这个镜像里以你的身份运行命令，只能看到分给它的 GPU。可用的镜像见“规则”页。',
    'usage.title': '用量统计', 'usage.unavailable': '本服务器暂不提供用量统计。',
    'rules.title': '实验室规则', 'rules.unavailable': '本服务器暂不提供规则说明。',
    'usage.avg_wait': '平均等待', 'usage.util': '已分配 GPU 的利用率', 'usage.idle_hours': '空闲 GPU·小时',
    'usage.no_shows': '爽约次数', 'usage.overruns': '超时次数', 'usage.week_from': '本周从 {at} 开始。',
    'usage.users': '个人', 'usage.projects': '项目', 'usage.user': '用户', 'usage.week_hours': '本周 GPU·小时 / 配额',
    'usage.pool': '来自项目共享池', 'usage.jobs': '任务数', 'usage.over_days': '最近四周',
    'usage.chart_hours': '每天的 GPU·小时（按人）', 'usage.chart_wait': '每天的平均等待（小时）与利用率（%）',
    'usage.gpu_hours': 'GPU·小时', 'usage.util_short': '利用率', 'usage.others': '其他人', 'usage.wait_h': '小时', 'usage.day': '日期',
    'usage.no_days': '暂无历史数据。', 'usage.no_charts': '图表库未安装（npm ci --prefix web），以下为数据：',
  },
};

const STORE_KEY = 'rota.lang';
let current = pick();

function pick() {
  let saved = null;
  try { saved = localStorage.getItem(STORE_KEY); } catch { /* private mode */ }
  if (saved && DICT[saved]) return saved;
  return /^zh\b/i.test(navigator.language || '') ? 'zh' : 'en';
}

export function lang() { return current; }

export function setLang(l) {
  if (!DICT[l]) return;
  current = l;
  try { localStorage.setItem(STORE_KEY, l); } catch { /* private mode */ }
}

/** The text of `key` in the current language with {name} filled from vars. A missing key
 *  shows the key itself and is reported on the console (the browser test fails on it). */
export function t(key, vars) {
  let s = DICT[current][key];
  if (s === undefined) {
    console.warn('i18n: missing ' + current + ' text for ' + key);
    s = DICT.en[key] ?? key;
  }
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (vars[k] === undefined ? m : String(vars[k]))) : s;
}

export const _dictForTests = DICT;
