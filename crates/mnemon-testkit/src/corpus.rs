//! Deterministic generator of realistic synthetic memory corpora, used by
//! benchmarks and scale tests (1k, 10k, 100k notes). Each generated note
//! looks like an agent memory note: YAML frontmatter (`name`, `description`,
//! `type`, dates, `ttl_days`, `tags`, `related`) followed by a Markdown body
//! of 300-3000 bytes. Body words are drawn from a Zipf distribution over a
//! fixed ~4000-token vocabulary (real technical words plus pronounceable
//! synthetic ones), mixed with per-note keywords so that notes are
//! distinguishable. Notes are grouped into slug families (`postgres-...`)
//! and some live in sub-folders (`infra/...`). Links (`related:` entries and
//! inline `[[id]]`, `[[id|label]]`, `[[id#heading]]`) are chosen with a
//! preferential-attachment bias, so a few hub notes collect hundreds of
//! in-links at 10k notes. A share of notes (`cjk_share`) is written in
//! Chinese. Alongside the notes a ground-truth query set (`queries.yaml`, same
//! format as the hand-written eval fixtures) is derived from the generated
//! notes. Everything is driven by a ChaCha8 RNG seeded from
//! [`GenConfig::seed`], so the same config always yields byte-identical output.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Parameters of a synthetic corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct GenConfig {
    /// Number of notes to generate.
    pub notes: usize,
    /// RNG seed; the same config always produces byte-identical output.
    pub seed: u64,
    /// Fraction of notes written in Chinese (names and bodies; ids stay ASCII).
    pub cjk_share: f64,
    /// Number of ground-truth queries written to `queries.yaml`.
    pub queries: usize,
}

impl GenConfig {
    /// Config with defaults: 5% CJK notes and 200 queries.
    pub fn new(notes: usize, seed: u64) -> Self {
        Self {
            notes,
            seed,
            cjk_share: 0.05,
            queries: 200,
        }
    }
}

/// Summary of a generated corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GenReport {
    /// Number of note files.
    pub notes: usize,
    /// Total size of the note files in bytes (excluding `queries.yaml`).
    pub bytes: u64,
    /// Total number of links (`related:` entries plus inline wiki links).
    pub links: usize,
    /// Number of queries in `queries.yaml`.
    pub queries: usize,
}

/// Writes `out/memory/<id>.md` for each note, and `out/queries.yaml` (the query set). Creates dirs.
///
/// Existing files are overwritten; files not part of the corpus are left alone.
pub fn generate(cfg: &GenConfig, out: &Path) -> io::Result<GenReport> {
    let corpus = build(cfg);
    let mem = out.join("memory");
    std::fs::create_dir_all(&mem)?;
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for (rel, _) in &corpus.notes {
        if let Some(parent) = mem.join(rel).parent()
            && dirs.insert(parent.to_path_buf())
        {
            std::fs::create_dir_all(parent)?;
        }
    }
    // Written sequentially on purpose: parallel writers into one directory
    // contend on the directory lock and are much slower on common filesystems.
    for (rel, text) in &corpus.notes {
        std::fs::write(mem.join(rel), text)?;
    }
    let bytes = corpus.notes.iter().map(|(_, t)| t.len() as u64).sum();
    std::fs::write(out.join("queries.yaml"), &corpus.queries_yaml)?;
    Ok(GenReport {
        notes: corpus.notes.len(),
        bytes,
        links: corpus.links,
        queries: corpus.queries,
    })
}

/// Same notes in memory without touching disk: (relative path like "topic/some-id.md", file contents).
pub fn generate_notes(cfg: &GenConfig) -> Vec<(String, String)> {
    build(cfg).notes
}

// ---------------------------------------------------------------------------
// Tunables
// ---------------------------------------------------------------------------

const VOCAB_SIZE: usize = 4000;
const ZIPF_S: f64 = 1.07;
/// The CJK word list is much shorter, so it gets a slightly flatter curve.
const CJK_ZIPF_S: f64 = 0.95;
/// Milder skew for picking topic (slug) words, so popular topics form big families.
const TOPIC_ZIPF_S: f64 = 0.9;
const BODY_MIN: usize = 300;
const BODY_MAX: usize = 3000;
/// English words at or beyond this rank count as "rare" (query material).
const RARE_RANK: u16 = 800;
/// Per-note keywords are drawn uniformly from ranks at or beyond this.
const KEYWORD_RANK: usize = 600;
/// Share of notes in a shared-prefix family.
const FAMILY_SHARE: f64 = 1.0 / 3.0;
/// Share of notes placed into an area sub-folder.
const FOLDER_SHARE: f64 = 0.2;
const LINKS_MIN: usize = 3;
const LINKS_MAX: usize = 10;
/// Pool copies a note gets on entry (lower = more skewed in-degree).
const BASE_ATTRACTION: usize = 2;

const SALT_RENDER: u64 = 0x5EED_0FB0_D1D1;
const SALT_QUERY: u64 = 0x5EED_0F9E_2121;
const VOCAB_SEED: u64 = 0x6D6E_656D_6F6E; // "mnemon": vocabulary is seed-independent

// ---------------------------------------------------------------------------
// Word lists
// ---------------------------------------------------------------------------

/// Highest-frequency English words (Zipf ranks 0..).
#[rustfmt::skip]
const FUNCTION_WORDS: &[&str] = &[
    "the", "to", "a", "and", "of", "in", "for", "is", "on", "we", "it", "with", "that", "this",
    "be", "not", "when", "after", "from", "by", "as", "are", "at", "or", "if", "but", "so", "then",
    "only", "was", "all", "one", "new", "before", "now", "no", "still", "each", "can", "should",
    "until", "into", "per", "via", "over", "out", "up", "use", "run", "our", "its", "any", "more",
    "than", "also", "just", "because", "while", "which", "same", "every", "during", "without",
    "between", "first", "last", "next", "back", "make", "keep", "set", "need", "check", "two",
    "instead", "never", "always", "again", "both", "most", "other", "there", "they", "them",
];

/// Common English content words of engineering notes (verbs, adjectives, nouns).
#[rustfmt::skip]
const GENERAL_WORDS: &[&str] = &[
    "issue", "fix", "change", "value", "default", "old", "large", "small", "slow", "fast", "daily",
    "weekly", "manual", "script", "rule", "note", "case", "time", "date", "week", "month", "day",
    "hour", "minute", "second", "number", "count", "size", "rate", "total", "average", "peak",
    "window", "range", "level", "mode", "state", "path", "file", "line", "field", "column",
    "table", "row", "key", "name", "list", "map", "item", "entry", "record", "result", "output",
    "input", "source", "target", "local", "remote", "global", "current", "previous", "original",
    "final", "initial", "extra", "missing", "broken", "stable", "flaky", "noisy", "safe", "unsafe",
    "critical", "minor", "major", "simple", "complex", "clean", "dirty", "empty", "full",
    "partial", "single", "multiple", "separate", "shared", "public", "private", "internal",
    "external", "automatic", "optional", "required", "expected", "actual", "known", "unknown",
    "correct", "wrong", "better", "worse", "higher", "lower", "faster", "slower", "cheaper",
    "added", "removed", "moved", "renamed", "fixed", "broke", "failed", "passed", "started",
    "stopped", "restarted", "deployed", "merged", "reverted", "bumped", "pinned", "replaced",
    "disabled", "enabled", "tuned", "raised", "lowered", "dropped", "skipped", "blocked",
    "waiting", "running", "pending", "done", "works", "fails", "breaks", "returns", "uses",
    "reads", "writes", "sends", "gets", "takes", "shows", "hits", "misses", "grows", "spikes",
    "drops", "leaks", "retries", "means", "needs", "wants", "prefers", "asked", "said",
    "confirmed", "agreed", "decided", "noticed", "found", "saw", "tried", "measured", "verified",
    "tested", "reviewed", "documented", "explained", "reason", "cause", "effect", "impact",
    "problem", "question", "answer", "idea", "plan", "goal", "approach", "option", "choice",
    "trick", "hack", "workaround", "gotcha", "caveat", "detail", "summary", "example", "history",
    "person", "people", "manager", "engineer", "reviewer", "morning", "night", "weekend", "today",
    "yesterday", "tomorrow", "soon", "later", "earlier", "recently", "usually", "sometimes",
    "rarely", "often", "mostly", "mainly", "probably", "maybe", "definitely", "actually",
    "currently", "already", "roughly", "exactly", "around", "about", "under", "above", "below",
    "behind", "ahead", "across", "through", "against", "within", "otherwise", "however", "though",
    "although", "unless", "since", "once", "whether", "either", "several", "many", "few", "much",
    "less", "least", "enough", "too", "very", "quite", "really", "well", "good", "bad", "nice",
    "ugly", "hard", "easy", "cheap", "expensive", "heavy", "light", "long", "short", "high", "low",
    "big", "tiny", "huge", "call", "calls", "handle", "handles", "open", "close", "closed",
    "opened", "create", "created", "update", "updated", "delete", "deleted", "read", "write",
    "send", "receive", "start", "stop", "wait", "pass", "fail", "load", "save", "store", "fetch",
    "parse", "render", "compute", "apply", "revert", "bump", "pin", "skip", "block", "allow",
    "deny", "accept", "reject", "approve",
];

/// Real technical vocabulary; earlier entries tend to get more common ranks.
#[rustfmt::skip]
const TECH_WORDS: &[&str] = &[
    "postgres", "pool", "deploy", "cache", "latency", "rollback", "query", "config", "index",
    "migration", "service", "worker", "queue", "timeout", "retry", "error", "alert", "metric",
    "dashboard", "release", "build", "test", "api", "user", "feedback", "reference", "project",
    "schema", "replica", "shard", "partition", "scheduler", "cron", "backoff", "circuit",
    "breaker", "canary", "rollout", "flag", "feature", "secret", "vault", "token", "auth", "oauth",
    "jwt", "session", "cookie", "login", "signup", "billing", "invoice", "stripe", "webhook",
    "endpoint", "grpc", "http", "rest", "graphql", "proxy", "nginx", "envoy", "ingress", "gateway",
    "balancer", "dns", "tls", "cert", "certificate", "ssl", "kubernetes", "k8s", "pod", "node",
    "cluster", "helm", "terraform", "ansible", "docker", "image", "container", "registry", "bazel",
    "pipeline", "ci", "cd", "artifact", "tag", "branch", "merge", "rebase", "commit", "review",
    "lint", "fixture", "mock", "benchmark", "profile", "flamegraph", "trace", "span", "prometheus",
    "grafana", "pager", "oncall", "incident", "postmortem", "runbook", "slo", "sla", "sli",
    "budget", "exception", "panic", "crash", "oom", "memory", "heap", "gc", "leak", "cpu", "disk",
    "iops", "throughput", "bandwidth", "network", "packet", "socket", "connection", "handshake",
    "keepalive", "lock", "mutex", "deadlock", "contention", "thread", "async", "tokio", "runtime",
    "future", "channel", "stream", "kafka", "consumer", "producer", "topic", "offset", "lag",
    "backlog", "batch", "snapshot", "backup", "restore", "wal", "checkpoint", "compaction",
    "tombstone", "ttl", "eviction", "redis", "memcached", "bloom", "filter", "hash", "bucket",
    "s3", "blob", "storage", "object", "upload", "download", "cdn", "edge", "region", "zone",
    "failover", "standby", "primary", "leader", "follower", "raft", "consensus", "quorum",
    "election", "heartbeat", "health", "probe", "readiness", "liveness", "autoscaler", "scaling",
    "capacity", "quota", "limit", "throttle", "ratelimit", "burst", "spike", "regression",
    "hotfix", "patch", "version", "semver", "dependency", "upgrade", "downgrade", "compat",
    "deprecation", "changelog", "docs", "readme", "onboarding", "customer", "tenant", "account",
    "org", "team", "role", "permission", "rbac", "policy", "audit", "compliance", "gdpr",
    "retention", "logging", "logs", "loki", "elastic", "search", "ranking", "embedding", "vector",
    "recall", "precision", "relevance", "tokenizer", "stemmer", "lexicon", "parser", "scanner",
    "crawler", "scraper", "twitter", "email", "outreach", "campaign", "newsletter", "template",
    "draft", "prompt", "agent", "model", "llm", "inference", "gpu", "training", "dataset", "eval",
    "label", "annotation", "preference", "tone", "style", "format", "markdown", "yaml", "json",
    "csv", "protobuf", "serialization", "encoding", "utf8", "unicode", "locale", "timezone",
    "clock", "drift", "skew", "ntp", "pgbouncer", "vacuum", "bloat", "autovacuum", "analyze",
    "planner", "explain", "seqscan", "btree", "gin", "trigram", "fulltext", "sqlite", "mysql",
    "clickhouse", "duckdb", "parquet", "arrow", "etl", "warehouse", "dbt", "airflow", "dag", "job",
    "task", "step", "stage", "approval", "gate", "promotion", "environment", "staging",
    "production", "sandbox", "preview", "bluegreen", "traffic", "routing", "header", "payload",
    "request", "response", "status", "code", "handler", "middleware", "router", "client", "server",
    "sdk", "cli", "binary", "crate", "package", "module", "library", "framework", "plugin",
    "extension", "hook", "callback", "event", "listener", "subscriber", "notification", "push",
    "mobile", "web", "frontend", "backend", "react", "typescript", "rust", "python", "golang",
    "java", "compiler", "linker", "wasm", "ffi", "abi", "syscall", "kernel", "cgroup", "namespace",
    "volume", "mount", "filesystem", "inode", "fsync", "journal", "replication", "sync",
    "conflict", "crdt", "vectorclock", "idempotency", "dedupe", "replay", "outbox", "saga",
    "transaction", "isolation", "serializable", "snapshotting", "mvcc", "wraparound", "xid",
    "sequence", "uuid", "ulid", "nonce", "signature", "signing", "rotation", "keypair", "kms",
    "hsm", "oidc", "saml", "sso", "mfa", "password", "hashing", "argon2", "bcrypt", "encryption",
    "decryption", "cipher", "aes", "rsa", "ed25519", "firewall", "vpc", "subnet", "peering", "nat",
    "bastion", "ssh", "vpn", "wireguard", "latencies", "percentile", "p99", "histogram", "counter",
    "gauge", "cardinality", "sampling", "exemplar", "otel", "jaeger", "tempo", "sentry",
    "pagerduty", "slack", "jira", "linear", "notion", "github", "gitlab", "actions", "runner",
    "cachekey", "warmup", "coldstart", "prefetch", "lazy", "eager", "debounce", "batching",
    "coalescing", "backpressure", "flowcontrol", "buffer", "ringbuffer", "arena", "allocator",
    "fragmentation", "mmap", "pagecache", "readahead", "compression", "zstd", "lz4", "gzip",
    "brotli", "chunk", "segment", "manifest", "catalog", "inventory", "ledger", "reconciliation",
    "settlement", "refund", "chargeback", "subscription", "trial", "churn", "retention", "cohort",
    "funnel", "conversion", "attribution", "analytics", "experiment", "abtest", "variant",
    "holdout", "rollup", "aggregate", "report", "export", "import", "deliverability", "bounce",
    "spam", "dkim", "spf", "dmarc", "domain", "reputation", "cooldown", "automation", "browser",
    "cdp", "headless", "selector", "scraping", "crawl", "sitemap", "robots", "captcha",
    "proxypool", "fingerprint", "shadowban", "followers", "thread", "reply", "mention", "hashtag",
    "dm", "inbox", "signal", "intent", "lead", "pipeline", "crm", "hubspot", "enrichment",
    "scoring", "persona", "segmenting", "roadmap", "milestone", "sprint", "standup", "retro",
    "estimate", "deadline", "owner", "stakeholder", "decision", "tradeoff", "constraint",
    "assumption", "risk", "mitigation", "fallback", "escalation", "handoff", "sunset", "archive",
    "cleanup", "garbage", "orphan", "stale", "freshness", "staleness", "invalidation", "purge",
    "warm", "hot", "cold", "tier", "ssd", "nvme", "raid", "numa", "hugepages", "affinity",
    "scheduler", "preemption", "spot", "reserved", "ondemand", "cost", "finops", "billingalert",
    "tagging", "labeling",
];

/// Common Chinese technical words/phrases; order is Zipf rank (first entries are function-like).
#[rustfmt::skip]
const CJK_WORDS: &[&str] = &[
    "的", "了", "在", "是", "和", "我们", "需要", "如果", "可以", "没有", "这个", "一个", "会", "要", "不", "也", "都",
    "就", "时", "后", "先", "再", "把", "被", "对", "从", "到", "用", "让", "还", "已经", "所有", "每次", "之前", "之后",
    "问题", "方案", "原因", "结果", "情况", "数据库", "连接池", "部署", "回滚", "缓存", "超时", "配置", "监控", "告警", "日志",
    "索引", "查询", "延迟", "吞吐", "集群", "节点", "副本", "主库", "从库", "分片", "分区", "迁移", "备份", "恢复", "快照", "事务",
    "锁", "死锁", "并发", "线程", "进程", "内存", "磁盘", "网络", "带宽", "请求", "响应", "接口", "服务", "网关", "代理",
    "负载均衡", "域名", "证书", "加密", "认证", "授权", "令牌", "会话", "用户", "租户", "账号", "权限", "角色", "审计", "合规",
    "发布", "灰度", "金丝雀", "版本", "分支", "合并", "提交", "评审", "测试", "单元测试", "集成测试", "压测", "基准", "性能", "优化",
    "瓶颈", "扩容", "缩容", "限流", "熔断", "降级", "重试", "退避", "队列", "消息", "消费者", "生产者", "主题", "积压", "批处理",
    "定时任务", "调度", "容器", "镜像", "编排", "流水线", "构建", "制品", "依赖", "升级", "兼容", "文档", "规范", "流程", "值班",
    "故障", "事故", "复盘", "根因", "预案", "演练", "指标", "仪表盘", "阈值", "采样", "链路追踪", "埋点", "报表", "搜索", "排序",
    "召回", "精度", "向量", "嵌入", "分词", "模型", "推理", "训练", "数据集", "评估", "标注", "提示词", "智能体", "记忆", "笔记",
    "标签", "模板", "草稿", "邮件", "推送", "通知", "订阅", "计费", "账单", "支付", "退款", "订单", "库存", "客户", "反馈", "偏好",
    "风格", "格式", "编码", "解析", "序列化", "校验", "幂等", "一致性", "可用性", "容错", "心跳", "选主", "共识", "存储", "对象存储",
    "文件", "目录", "路径", "权重", "参数", "变量", "环境", "生产环境", "测试环境", "预发", "密钥", "凭证", "轮换", "过期", "清理",
    "压缩", "归档", "保留", "删除", "同步", "异步", "回调", "钩子", "脚本", "命令", "工具", "插件", "扩展", "框架", "运行时",
    "编译", "内核", "驱动", "硬件", "机房", "区域", "可用区", "容灾", "切换", "主备", "读写分离", "慢查询", "执行计划", "统计信息",
    "连接数", "句柄", "泄漏", "抖动", "毛刺", "尖峰", "峰值", "均值", "分位数", "错误率", "成功率", "命中率", "失效", "预热", "穿透",
    "雪崩", "击穿", "热点", "冷启动", "灰度比例", "流量", "路由", "转发", "重定向", "跨域", "签名", "验签", "加盐", "哈希",
    "布隆过滤器", "分布式锁", "选举", "租约", "心跳超时", "脑裂", "回放", "补偿", "对账", "结算", "账期", "发票", "优惠券", "风控",
    "黑名单", "白名单", "验证码", "爬虫", "抓取", "反爬", "封禁", "冷却", "自动化", "浏览器", "无头模式", "选择器", "外呼", "线索",
    "转化", "漏斗", "留存", "流失", "实验", "分组", "对照组", "埋点事件", "看板", "周报", "里程碑", "排期", "需求", "负责人", "决策",
    "权衡", "约束", "假设", "风险", "兜底", "升级路径", "交接", "下线", "过期数据", "孤儿数据", "垃圾回收", "碎片", "预分配", "内存映射",
    "页缓存", "顺序写", "随机读", "写放大", "读放大", "合并策略", "墓碑", "多租户", "隔离级别", "可重复读", "串行化", "长事务", "大事务",
    "热更新", "配置中心", "服务发现", "注册中心", "健康检查", "探针", "就绪", "存活", "弹性伸缩", "配额", "成本", "预算", "账单告警",
    "资源标签", "数据湖", "数仓", "宽表", "明细", "聚合", "离线任务", "实时计算", "窗口", "水位线", "乱序", "去重",
];

#[rustfmt::skip]
const ONSETS: &[&str] = &[
    "b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p",
    "pr", "qu", "r", "s", "sh", "sk", "st", "t", "tr", "v", "w", "z", "sl", "gl", "bl", "cr",
];
#[rustfmt::skip]
const VOWELS: &[&str] = &[
    "a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y",
];
#[rustfmt::skip]
const CODAS: &[&str] = &[
    "n", "r", "l", "s", "x", "m", "th", "k", "nd", "st", "rt", "ck",
];

#[rustfmt::skip]
const FOLDERS: &[&str] = &[
    "infra", "ops", "growth", "research", "clients", "team", "platform", "data", "archive",
    "oncall", "product", "security",
];

#[rustfmt::skip]
const HEADINGS_EN: &[&str] = &[
    "Context", "Background", "Steps", "Rollback", "Rollback plan", "Open questions", "Numbers",
    "Gotchas", "Timeline", "Root cause", "Follow-ups", "Config", "Decision", "Known issues",
    "Metrics", "Owners", "Status", "Next steps", "Examples", "Limits", "Troubleshooting", "Setup",
    "Verification", "Alternatives considered",
];
#[rustfmt::skip]
const HEADINGS_ZH: &[&str] = &[
    "背景", "步骤", "回滚方案", "待解决问题", "关键数字", "注意事项", "时间线", "根因", "后续跟进", "配置", "决策", "现状", "下一步",
    "排查思路", "监控指标", "负责人",
];

#[rustfmt::skip]
const NAME_PREFIX: &[&str] = &[
    "Quarterly", "Weekly", "Legacy", "Shared", "Internal", "Nightly",
];
#[rustfmt::skip]
const NAME_SUFFIX: &[&str] = &[
    "Notes", "Policy", "Runbook", "Checklist", "Plan", "Postmortem", "Guide", "Setup", "Audit",
    "Strategy", "Overview", "Triage", "Tuning", "Migration", "Playbook",
];

#[rustfmt::skip]
const ACRONYMS: &[&str] = &[
    "api", "sql", "ci", "cd", "jwt", "slo", "sla", "sli", "dns", "tls", "ssl", "http", "grpc",
    "cpu", "gpu", "oom", "gc", "s3", "cdn", "iops", "wal", "ttl", "rbac", "gdpr", "llm", "csv",
    "json", "yaml", "utf8", "ntp", "ssh", "sdk", "cli", "etl", "dag", "kms", "hsm", "oidc", "saml",
    "sso", "mfa", "aes", "rsa", "vpc", "nat", "vpn", "crm", "dm", "cdp", "ffi", "abi", "xid",
    "mvcc", "crdt", "numa", "ssd", "nvme", "raid", "dkim", "spf", "dmarc", "p99", "uuid", "ulid",
];

// ---------------------------------------------------------------------------
// Vocabularies and sampling
// ---------------------------------------------------------------------------

/// Cumulative Zipf distribution over ranks `0..n`, with a bucket table so
/// that sampling is a short search instead of a full binary search.
struct Zipf {
    cdf: Vec<f64>,
    /// `lut[b]` = first rank whose cdf is >= `b / LUT`.
    lut: Vec<u32>,
}

const ZIPF_LUT: usize = 1 << 14;

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n.max(1));
        let mut acc = 0.0;
        for r in 0..n.max(1) {
            acc += 1.0 / ((r + 1) as f64).powf(s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        let last = cdf.len() - 1;
        let lut = (0..=ZIPF_LUT)
            .map(|b| {
                let x = b as f64 / ZIPF_LUT as f64;
                cdf.partition_point(|&c| c < x).min(last) as u32
            })
            .collect();
        Self { cdf, lut }
    }

    fn sample<R: Rng>(&self, rng: &mut R) -> usize {
        let u: f64 = rng.random();
        let b = ((u * ZIPF_LUT as f64) as usize).min(ZIPF_LUT - 1);
        let lo = self.lut[b] as usize;
        let hi = self.lut[b + 1] as usize;
        lo + self.cdf[lo..=hi].partition_point(|&c| c < u)
    }
}

struct Vocab {
    /// Words by Zipf rank (0 = most frequent).
    words: Vec<String>,
    zipf: Zipf,
    n_function: usize,
    /// Ranks of real technical words (topic vocabulary for ids, tags, code identifiers).
    tech: Vec<u16>,
    /// Ranks of synthetic (codename-like) words.
    synth: Vec<u16>,
    /// Skewed picker over `tech`.
    tech_zipf: Zipf,
    index: HashMap<String, u16>,
}

impl Vocab {
    fn build() -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(VOCAB_SEED);
        let mut seen: HashSet<String> = HashSet::new();
        let mut words: Vec<String> = Vec::with_capacity(VOCAB_SIZE);
        for w in FUNCTION_WORDS {
            if seen.insert((*w).to_string()) {
                words.push((*w).to_string());
            }
        }
        let n_function = words.len();
        let mut tech: Vec<String> = Vec::new();
        for w in TECH_WORDS {
            if seen.insert((*w).to_string()) {
                tech.push((*w).to_string());
            }
        }
        let mut general: Vec<String> = Vec::new();
        for w in GENERAL_WORDS {
            if seen.insert((*w).to_string()) {
                general.push((*w).to_string());
            }
        }
        let n_synth = VOCAB_SIZE.saturating_sub(words.len() + tech.len() + general.len());
        let mut synth: Vec<String> = Vec::with_capacity(n_synth);
        while synth.len() < n_synth {
            let w = synth_word(&mut rng);
            if (4..=12).contains(&w.len()) && seen.insert(w.clone()) {
                synth.push(w);
            }
        }
        // Merge: real (technical and general) words dominate the head of the
        // distribution, a few of them are scattered into the tail, and
        // synthetic codename-like words fill the rest of the tail.
        let mut tech_it = tech.into_iter().peekable();
        let mut general_it = general.into_iter().peekable();
        let mut synth_it = synth.into_iter().peekable();
        let mut tech_ranks = Vec::new();
        let mut synth_ranks = Vec::new();
        let mut slot = 0usize;
        loop {
            let p_real = if slot < 900 { 0.88 } else { 0.06 };
            let have_real = tech_it.peek().is_some() || general_it.peek().is_some();
            let take_real = match (have_real, synth_it.peek().is_some()) {
                (false, false) => break,
                (true, false) => true,
                (false, true) => false,
                (true, true) => rng.random_bool(p_real),
            };
            let rank = words.len() as u16;
            if take_real {
                let use_tech = match (tech_it.peek().is_some(), general_it.peek().is_some()) {
                    (true, true) => rng.random_bool(0.6),
                    (t, _) => t,
                };
                if use_tech {
                    words.push(tech_it.next().unwrap_or_default());
                    tech_ranks.push(rank);
                } else {
                    words.push(general_it.next().unwrap_or_default());
                }
            } else {
                words.push(synth_it.next().unwrap_or_default());
                synth_ranks.push(rank);
            }
            slot += 1;
        }
        let index = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.clone(), i as u16))
            .collect();
        Self {
            zipf: Zipf::new(words.len(), ZIPF_S),
            tech_zipf: Zipf::new(tech_ranks.len(), TOPIC_ZIPF_S),
            words,
            n_function,
            tech: tech_ranks,
            synth: synth_ranks,
            index,
        }
    }

    fn word(&self, r: u16) -> &str {
        &self.words[r as usize]
    }

    fn rank(&self, w: &str) -> u16 {
        self.index.get(w).copied().unwrap_or(0)
    }

    /// A topic word for slugs: mostly real technical words, sometimes a codename.
    fn topic_word<R: Rng>(&self, rng: &mut R) -> u16 {
        if rng.random_bool(0.1) {
            self.synth[rng.random_range(0..self.synth.len())]
        } else {
            self.tech[self.tech_zipf.sample(rng)]
        }
    }

    fn tech_word<R: Rng>(&self, rng: &mut R) -> &str {
        self.word(self.tech[self.tech_zipf.sample(rng)])
    }

    fn keyword<R: Rng>(&self, rng: &mut R) -> u16 {
        rng.random_range(KEYWORD_RANK.min(self.words.len() - 1)..self.words.len()) as u16
    }
}

fn synth_word<R: Rng>(rng: &mut R) -> String {
    let syllables = rng.random_range(2..=3);
    let mut w = String::new();
    for _ in 0..syllables {
        w.push_str(ONSETS.choose(rng).copied().unwrap_or("b"));
        w.push_str(VOWELS.choose(rng).copied().unwrap_or("a"));
        if rng.random_bool(0.35) {
            w.push_str(CODAS.choose(rng).copied().unwrap_or("n"));
        }
    }
    w
}

struct CjkVocab {
    words: Vec<&'static str>,
    zipf: Zipf,
    n_function: usize,
    /// Words at or beyond this rank are used as keywords / query material.
    tail: usize,
}

impl CjkVocab {
    fn build() -> Self {
        let mut seen = HashSet::new();
        let words: Vec<&'static str> = CJK_WORDS
            .iter()
            .copied()
            .filter(|w| seen.insert(*w))
            .collect();
        Self {
            zipf: Zipf::new(words.len(), CJK_ZIPF_S),
            n_function: 40.min(words.len()),
            tail: 100.min(words.len().saturating_sub(1)),
            words,
        }
    }

    fn keyword<R: Rng>(&self, rng: &mut R) -> u16 {
        rng.random_range(self.tail..self.words.len()) as u16
    }
}

// ---------------------------------------------------------------------------
// Corpus plan
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Project,
    Reference,
    Feedback,
    User,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Project => "project",
            Kind::Reference => "reference",
            Kind::Feedback => "feedback",
            Kind::User => "user",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Rule,
    Sections,
}

struct Family {
    prefix: Vec<u16>,
    keywords: Vec<u16>,
    cjk_keywords: Vec<u16>,
    folder: Option<&'static str>,
    members: Vec<u32>,
}

struct Plan {
    id: String,
    name: String,
    kind: Kind,
    cjk: bool,
    family: Option<u32>,
    /// English vocabulary ranks of the slug words (without `-N` suffix).
    slug: Vec<u16>,
    /// Whether `slug[0]` is a type prefix (`feedback-`, `user-`, `reference-`).
    type_prefix: bool,
    /// Per-note keywords: English ranks, or CJK ranks for CJK notes.
    keywords: Vec<u16>,
    /// CJK ranks used in the name (CJK notes only).
    name_zh: Vec<u16>,
    style: Style,
    headings: Vec<&'static str>,
    links: Vec<u32>,
    /// The first `n_related` links go to `related:`, the rest are inline.
    n_related: usize,
}

impl Plan {
    fn topic_slug(&self) -> &[u16] {
        if self.type_prefix && self.slug.len() > 1 {
            &self.slug[1..]
        } else {
            &self.slug
        }
    }
}

/// Query material recorded while rendering a note.
#[derive(Default, Clone)]
struct NoteMeta {
    /// Candidate distinctive words (vocabulary ranks, CJK ranks for CJK notes), rarest first.
    cands: Vec<u16>,
    /// A frequent (non-function) word that occurs in the note.
    common: Option<u16>,
}

struct Ctx<'a> {
    seed: u64,
    en: &'a Vocab,
    zh: &'a CjkVocab,
    plans: &'a [Plan],
}

struct Corpus {
    notes: Vec<(String, String)>,
    queries_yaml: String,
    links: usize,
    queries: usize,
}

fn build(cfg: &GenConfig) -> Corpus {
    build_with_threads(cfg, worker_threads(cfg.notes))
}

/// Output does not depend on `threads`: every note has its own RNG stream.
fn build_with_threads(cfg: &GenConfig, threads: usize) -> Corpus {
    let en = Vocab::build();
    let zh = CjkVocab::build();
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let (mut plans, families) = plan_notes(cfg, &en, &zh, &mut rng);
    assign_links(&mut plans, &families, &mut rng);
    let ctx = Ctx {
        seed: cfg.seed,
        en: &en,
        zh: &zh,
        plans: &plans,
    };
    let rendered = render_all(&ctx, threads);
    let links = plans.iter().map(|p| p.links.len()).sum();
    let mut metas: Vec<NoteMeta> = Vec::with_capacity(rendered.len());
    let mut notes: Vec<(String, String)> = Vec::with_capacity(rendered.len());
    for (p, (text, meta)) in plans.iter().zip(rendered) {
        notes.push((format!("{}.md", p.id), text));
        metas.push(meta);
    }
    let (queries_yaml, queries) = build_queries(cfg, &ctx, &metas);
    Corpus {
        notes,
        queries_yaml,
        links,
        queries,
    }
}

fn pick_kind<R: Rng>(rng: &mut R) -> Kind {
    match rng.random_range(0..100) {
        0..50 => Kind::Project,
        50..75 => Kind::Reference,
        75..90 => Kind::Feedback,
        _ => Kind::User,
    }
}

fn plan_notes<R: Rng>(
    cfg: &GenConfig,
    en: &Vocab,
    zh: &CjkVocab,
    rng: &mut R,
) -> (Vec<Plan>, Vec<Family>) {
    let n = cfg.notes;
    let cjk_share = if cfg.cjk_share.is_finite() {
        cfg.cjk_share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // 1. Families with shared slug prefixes; heavy-tailed sizes.
    let mut families: Vec<Family> = Vec::new();
    let mut prefixes: HashSet<Vec<u16>> = HashSet::new();
    let fam_target = (n as f64 * FAMILY_SHARE) as usize;
    let mut slots: Vec<Option<u32>> = Vec::with_capacity(n);
    while slots.len() < fam_target {
        let u: f64 = rng.random_range(1e-9..1.0);
        let size = ((2.5 * u.powf(-1.0 / 1.3)) as usize).clamp(2, 120);
        let size = size.min(fam_target - slots.len()).max(1);
        let mut prefix = Vec::new();
        for attempt in 0..30 {
            let words = if attempt > 10 || rng.random_bool(0.4) {
                2
            } else {
                1
            };
            let mut p: Vec<u16> = Vec::with_capacity(words);
            while p.len() < words {
                let w = en.topic_word(rng);
                if !p.contains(&w) {
                    p.push(w);
                }
            }
            if !prefixes.contains(&p) {
                prefix = p;
                break;
            }
        }
        if prefix.is_empty() {
            prefix = vec![en.topic_word(rng), en.topic_word(rng), en.topic_word(rng)];
        }
        prefixes.insert(prefix.clone());
        let fid = families.len() as u32;
        families.push(Family {
            prefix,
            keywords: (0..3).map(|_| en.keyword(rng)).collect(),
            cjk_keywords: (0..2).map(|_| zh.keyword(rng)).collect(),
            folder: if rng.random_bool(FOLDER_SHARE) {
                FOLDERS.choose(rng).copied()
            } else {
                None
            },
            members: Vec::new(),
        });
        slots.extend(std::iter::repeat_n(Some(fid), size));
    }
    slots.resize(n, None);
    slots.shuffle(rng);

    // 2. Per-note plan: kind, id, name, keywords, layout.
    let feedback = en.rank("feedback");
    let user = en.rank("user");
    let reference = en.rank("reference");
    let mut stems: HashSet<String> = HashSet::with_capacity(n);
    let mut suffix_next: HashMap<String, u32> = HashMap::new();
    let mut plans = Vec::with_capacity(n);
    for (i, fam) in slots.iter().enumerate() {
        let kind = pick_kind(rng);
        let cjk = rng.random_bool(cjk_share);
        let mut slug: Vec<u16> = Vec::with_capacity(4);
        let mut type_prefix = false;
        if let Some(f) = fam {
            slug.extend_from_slice(&families[*f as usize].prefix);
        } else {
            let tp = match kind {
                Kind::Feedback if rng.random_bool(0.5) => Some(feedback),
                Kind::User if rng.random_bool(0.6) => Some(user),
                Kind::Reference if rng.random_bool(0.2) => Some(reference),
                _ => None,
            };
            if let Some(t) = tp {
                slug.push(t);
                type_prefix = true;
            }
        }
        let fixed = slug.len();
        let want = rng.random_range(2..=4).max(fixed + 1).min(fixed.max(3) + 1);
        let mut stem = String::new();
        for attempt in 0..4 {
            slug.truncate(fixed);
            while slug.len() < want {
                let w = en.topic_word(rng);
                if !slug.contains(&w) {
                    slug.push(w);
                }
            }
            stem = slug
                .iter()
                .map(|&r| en.word(r))
                .collect::<Vec<_>>()
                .join("-");
            if !stems.contains(&stem) || attempt == 3 {
                break;
            }
        }
        if !stems.insert(stem.clone()) {
            let base = stem.clone();
            let next = suffix_next.entry(base.clone()).or_insert(2);
            loop {
                let cand = format!("{base}-{next}");
                *next += 1;
                if stems.insert(cand.clone()) {
                    stem = cand;
                    break;
                }
            }
        }
        let folder = match fam {
            Some(f) => families[*f as usize].folder,
            None if rng.random_bool(FOLDER_SHARE) => FOLDERS.choose(rng).copied(),
            None => None,
        };
        let id = match folder {
            Some(dir) => format!("{dir}/{stem}"),
            None => stem,
        };

        let mut keywords = Vec::new();
        let mut name_zh = Vec::new();
        if cjk {
            if let Some(f) = fam {
                keywords.extend_from_slice(&families[*f as usize].cjk_keywords);
            }
            for _ in 0..rng.random_range(2..=4) {
                keywords.push(zh.keyword(rng));
            }
            let k = rng.random_range(2..=3);
            while name_zh.len() < k {
                let w = if rng.random_bool(0.6) {
                    *keywords.choose(rng).unwrap_or(&0)
                } else {
                    zh.keyword(rng)
                };
                if !name_zh.contains(&w) {
                    name_zh.push(w);
                }
            }
        } else {
            if let Some(f) = fam {
                let fk = &families[*f as usize].keywords;
                keywords.extend(fk.choose_multiple(rng, 2).copied());
            }
            for _ in 0..rng.random_range(2..=4) {
                keywords.push(en.keyword(rng));
            }
        }

        let style = match kind {
            Kind::Feedback if rng.random_bool(0.7) => Style::Rule,
            _ if rng.random_bool(0.35) => Style::Sections,
            _ => Style::Plain,
        };
        let headings: Vec<&'static str> = if style == Style::Sections {
            let pool = if cjk { HEADINGS_ZH } else { HEADINGS_EN };
            let k = rng.random_range(2..=4);
            pool.choose_multiple(rng, k).copied().collect()
        } else {
            Vec::new()
        };

        let mut plan = Plan {
            id,
            name: String::new(),
            kind,
            cjk,
            family: *fam,
            slug,
            type_prefix,
            keywords,
            name_zh,
            style,
            headings,
            links: Vec::new(),
            n_related: 0,
        };
        plan.name = make_name(&plan, en, zh, rng);
        if let Some(f) = fam {
            families[*f as usize].members.push(i as u32);
        }
        plans.push(plan);
    }
    (plans, families)
}

fn title_word(w: &str) -> String {
    if ACRONYMS.contains(&w) {
        return w.to_ascii_uppercase();
    }
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

fn make_name<R: Rng>(plan: &Plan, en: &Vocab, zh: &CjkVocab, rng: &mut R) -> String {
    let topic = plan.topic_slug();
    if plan.cjk {
        let mut s = String::new();
        if rng.random_bool(0.4) {
            let w = topic.choose(rng).copied().unwrap_or(0);
            s.push_str(&title_word(en.word(w)));
            s.push(' ');
        }
        for &w in &plan.name_zh {
            s.push_str(zh.words[w as usize]);
        }
        return s;
    }
    let mut parts: Vec<String> = Vec::new();
    if rng.random_bool(0.1) {
        parts.push(
            NAME_PREFIX
                .choose(rng)
                .copied()
                .unwrap_or("Shared")
                .to_string(),
        );
    }
    parts.extend(topic.iter().map(|&w| title_word(en.word(w))));
    if rng.random_bool(0.35) {
        parts.push(
            NAME_SUFFIX
                .choose(rng)
                .copied()
                .unwrap_or("Notes")
                .to_string(),
        );
    }
    parts.join(" ")
}

/// Chooses 3-10 distinct link targets per note: family siblings, a
/// preferential-attachment pool, and uniform picks (which may point forward).
fn assign_links<R: Rng>(plans: &mut [Plan], families: &[Family], rng: &mut R) {
    let n = plans.len();
    if n < 2 {
        return;
    }
    // Growth model (Barabasi-Albert style): note `i` enters the pool with a
    // small base weight when it is processed, and every link adds one more
    // copy of its target, so early, already-popular notes become hubs.
    let mut pool: Vec<u32> = Vec::with_capacity(n * (LINKS_MAX + BASE_ATTRACTION));
    for (i, plan) in plans.iter_mut().enumerate() {
        let k = rng.random_range(LINKS_MIN..=LINKS_MAX).min(n - 1);
        let siblings: &[u32] = match plan.family {
            Some(f) if families[f as usize].members.len() > 1 => &families[f as usize].members,
            _ => &[],
        };
        pool.extend(std::iter::repeat_n(i as u32, BASE_ATTRACTION));
        let mut links: Vec<u32> = Vec::with_capacity(k);
        let mut attempts = 0usize;
        while links.len() < k {
            attempts += 1;
            let t = if attempts > 60 {
                // Tiny corpora: deterministic scan for any free target.
                let start = rng.random_range(0..n);
                (0..n)
                    .map(|d| ((start + d) % n) as u32)
                    .find(|&t| t as usize != i && !links.contains(&t))
                    .unwrap_or(i as u32)
            } else {
                let r: f64 = rng.random();
                if r < 0.3 && !siblings.is_empty() {
                    siblings[rng.random_range(0..siblings.len())]
                } else if r < 0.8 {
                    pool[rng.random_range(0..pool.len())]
                } else {
                    rng.random_range(0..n) as u32
                }
            };
            if t as usize == i || links.contains(&t) {
                continue;
            }
            links.push(t);
            pool.push(t);
        }
        let n_related = links.iter().filter(|_| rng.random_bool(0.55)).count();
        plan.links = links;
        plan.n_related = n_related;
    }
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

/// Threads worth using for `n` independent per-note jobs (1 for small corpora).
fn worker_threads(n: usize) -> usize {
    if n < 2000 {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(16)
}

fn render_all(ctx: &Ctx, threads: usize) -> Vec<(String, NoteMeta)> {
    let n = ctx.plans.len();
    if threads < 2 || n < 2 {
        return (0..n).map(|i| render_note(ctx, i)).collect();
    }
    // Every note has its own RNG stream, so the split does not affect output.
    let chunk = n.div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|start| {
                let end = (start + chunk).min(n);
                s.spawn(move || {
                    (start..end)
                        .map(|i| render_note(ctx, i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("render thread panicked"))
            .collect()
    })
}

/// One generated sentence plus the query material it contributes.
struct Sentence {
    text: String,
    kw: u32,
    rare: Vec<u16>,
    common: Option<u16>,
    linked: bool,
}

struct Writer<'a> {
    ctx: &'a Ctx<'a>,
    plan: &'a Plan,
    rng: ChaCha8Rng,
}

fn days_in_month(m: u32) -> u32 {
    match m {
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Emits a YAML scalar, double-quoting it when a plain scalar would be ambiguous.
fn yaml_str(s: &str) -> String {
    let first_ok = s.chars().next().is_some_and(|c| c.is_alphanumeric());
    let lower = s.to_ascii_lowercase();
    let keyword = matches!(
        lower.as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
    );
    let risky = s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.contains('"')
        || s.contains('\\')
        || s.contains('\n')
        || s.contains('`');
    if first_ok && !keyword && !risky && s.trim() == s {
        s.to_string()
    } else {
        let mut q = String::with_capacity(s.len() + 2);
        q.push('"');
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }
}

fn render_note(ctx: &Ctx, i: usize) -> (String, NoteMeta) {
    let plan = &ctx.plans[i];
    let seed = ctx.seed ^ SALT_RENDER ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut w = Writer {
        ctx,
        plan,
        rng: ChaCha8Rng::seed_from_u64(seed),
    };
    let desc = w.description();

    let rng = &mut w.rng;
    let cm = rng.random_range(1..=12u32);
    let cd = rng.random_range(1..=days_in_month(cm));
    let um = rng.random_range(1..=6u32);
    let ud = rng.random_range(1..=days_in_month(um));
    let ttl = if rng.random_bool(0.1) {
        if rng.random_bool(0.5) { "30" } else { "90" }
    } else {
        "null"
    };
    let mut tags: Vec<&str> = Vec::new();
    let n_tags = rng.random_range(1..=4);
    for &r in plan.topic_slug() {
        if tags.len() < n_tags && !tags.contains(&ctx.en.word(r)) {
            tags.push(ctx.en.word(r));
        }
    }
    for _ in 0..4 {
        if tags.len() >= n_tags {
            break;
        }
        let t = ctx.en.tech_word(rng);
        if !tags.contains(&t) {
            tags.push(t);
        }
    }

    let mut s = String::with_capacity(512);
    s.push_str("---\n");
    let _ = writeln!(s, "name: {}", yaml_str(&plan.name));
    let _ = writeln!(s, "description: {}", yaml_str(&desc.text));
    let _ = writeln!(s, "type: {}", plan.kind.as_str());
    let _ = writeln!(s, "created_at: 2025-{cm:02}-{cd:02}");
    let _ = writeln!(s, "updated_at: 2026-{um:02}-{ud:02}");
    let _ = writeln!(s, "ttl_days: {ttl}");
    let _ = writeln!(s, "tags: [{}]", tags.join(", "));
    if plan.n_related == 0 {
        s.push_str("related: []\n");
    } else {
        s.push_str("related:\n");
        for &t in &plan.links[..plan.n_related] {
            let _ = writeln!(s, "  - {}", ctx.plans[t as usize].id);
        }
    }
    s.push_str("---\n\n");

    let mut buf = s.into_bytes();
    let mut sents = w.body(&mut buf);
    let text = String::from_utf8(buf).expect("generated text is valid UTF-8");
    sents.push(desc);
    (text, collect_meta(plan, &sents))
}

fn collect_meta(plan: &Plan, sents: &[Sentence]) -> NoteMeta {
    let mut kw = 0u32;
    let mut rare: Vec<u16> = Vec::new();
    let mut common = None;
    for s in sents {
        kw |= s.kw;
        rare.extend_from_slice(&s.rare);
        if common.is_none() {
            common = s.common;
        }
    }
    let mut cands: Vec<u16> = plan
        .keywords
        .iter()
        .enumerate()
        .filter(|(k, _)| kw & (1 << k) != 0)
        .map(|(_, &r)| r)
        .collect();
    cands.extend(rare);
    if plan.cjk {
        cands.extend_from_slice(&plan.name_zh);
    }
    cands.sort_unstable_by(|a, b| b.cmp(a));
    cands.dedup();
    cands.truncate(10);
    NoteMeta { cands, common }
}

impl Writer<'_> {
    fn en_word(&mut self, s: &mut Sentence) -> u16 {
        let p = self.plan;
        let roll: f64 = self.rng.random();
        let r = if roll < 0.06 && !p.keywords.is_empty() {
            let k = self.rng.random_range(0..p.keywords.len());
            s.kw |= 1 << k;
            p.keywords[k]
        } else if roll < 0.12 {
            p.slug[self.rng.random_range(0..p.slug.len())]
        } else {
            self.ctx.en.zipf.sample(&mut self.rng) as u16
        };
        if r >= RARE_RANK && !s.rare.contains(&r) {
            s.rare.push(r);
        }
        let nf = self.ctx.en.n_function as u16;
        if s.common.is_none() && r >= nf && r < nf + 150 {
            s.common = Some(r);
        }
        r
    }

    fn zh_word(&mut self, s: &mut Sentence) -> u16 {
        let p = self.plan;
        let zh = self.ctx.zh;
        let roll: f64 = self.rng.random();
        let r = if roll < 0.1 && !p.keywords.is_empty() {
            let k = self.rng.random_range(0..p.keywords.len());
            s.kw |= 1 << k;
            p.keywords[k]
        } else if roll < 0.14 && !p.name_zh.is_empty() {
            p.name_zh[self.rng.random_range(0..p.name_zh.len())]
        } else {
            zh.zipf.sample(&mut self.rng) as u16
        };
        if r as usize >= zh.tail && !s.rare.contains(&r) {
            s.rare.push(r);
        }
        if s.common.is_none() && (r as usize) >= zh.n_function && (r as usize) < zh.tail {
            s.common = Some(r);
        }
        r
    }

    fn number(&mut self, out: &mut String) {
        let rng = &mut self.rng;
        let _ = match rng.random_range(0..9) {
            0 => write!(out, "{}", rng.random_range(2..500)),
            1 => write!(out, "{}ms", rng.random_range(5..2000)),
            2 => write!(out, "{}%", rng.random_range(1..100)),
            3 => write!(out, "p{}", [50, 95, 99].choose(rng).copied().unwrap_or(99)),
            4 => write!(
                out,
                "{}.{}x",
                rng.random_range(1..10),
                rng.random_range(0..10)
            ),
            5 => write!(
                out,
                "HTTP {}",
                [200, 401, 404, 429, 500, 503]
                    .choose(rng)
                    .copied()
                    .unwrap_or(500)
            ),
            6 => write!(
                out,
                "v{}.{}.{}",
                rng.random_range(0..4),
                rng.random_range(0..20),
                rng.random_range(0..10)
            ),
            7 => write!(out, "{}k", rng.random_range(1..900)),
            _ => write!(
                out,
                "{}GB",
                [1, 2, 4, 8, 16, 32, 64].choose(rng).copied().unwrap_or(8)
            ),
        };
    }

    fn code_ident(&mut self, out: &mut String) {
        let en = self.ctx.en;
        let slug = &self.plan.slug;
        let rng = &mut self.rng;
        let a = en.word(slug[rng.random_range(0..slug.len())]).to_string();
        let b = en.tech_word(rng).to_string();
        let c = en.tech_word(rng).to_string();
        out.push('`');
        match rng.random_range(0..6) {
            0 => {
                let _ = write!(out, "{a}_{b}");
            }
            1 => {
                let _ = write!(out, "{a}_{b}_{c}()");
            }
            2 => {
                let ext = ["yaml", "toml", "rs", "sql", "json"].choose(rng).copied();
                let _ = write!(out, "ops/{a}/{b}.{}", ext.unwrap_or("yaml"));
            }
            3 => {
                let _ = write!(out, "--{a}-{b}");
            }
            4 => {
                let _ = write!(out, "{}_{}", a.to_ascii_uppercase(), b.to_ascii_uppercase());
            }
            _ => {
                let _ = write!(out, "{a}::{b}_{c}");
            }
        }
        out.push('`');
    }

    fn sentence(&mut self) -> Sentence {
        let mut s = Sentence {
            text: String::with_capacity(192),
            kw: 0,
            rare: Vec::new(),
            common: None,
            linked: false,
        };
        if self.plan.cjk {
            self.zh_sentence(&mut s);
        } else {
            self.en_sentence(&mut s);
        }
        s
    }

    fn en_sentence(&mut self, s: &mut Sentence) {
        let n = self.rng.random_range(8..=20);
        let mut out = std::mem::take(&mut s.text);
        let mut prev = u16::MAX;
        for j in 0..n {
            if j > 0 {
                out.push(' ');
            }
            let roll: f64 = self.rng.random();
            if roll < 0.035 {
                self.number(&mut out);
            } else if roll < 0.05 {
                self.code_ident(&mut out);
            } else {
                let mut r = self.en_word(s);
                if r == prev {
                    // Re-draw once to avoid "the the"; the repeated word is in the sentence anyway.
                    r = self.en_word(s);
                }
                prev = r;
                let w = self.ctx.en.word(r);
                if j == 0 {
                    push_title(&mut out, w);
                } else {
                    out.push_str(w);
                }
            }
            if j + 1 < n && self.rng.random_bool(0.07) {
                out.push(',');
            }
        }
        out.push(if self.rng.random_bool(0.05) { '?' } else { '.' });
        s.text = out;
    }

    fn zh_sentence(&mut self, s: &mut Sentence) {
        let n = self.rng.random_range(8..=20);
        let mut out = std::mem::take(&mut s.text);
        let mut prev_ascii = false;
        let mut after_comma = true;
        let mut prev = u16::MAX;
        for j in 0..n {
            let roll: f64 = self.rng.random();
            let (tok, ascii) = if roll < 0.06 {
                let slug = &self.plan.slug;
                let w = self.ctx.en.word(slug[self.rng.random_range(0..slug.len())]);
                (title_first(w), true)
            } else if roll < 0.09 {
                let rng = &mut self.rng;
                let t = match rng.random_range(0..5) {
                    0 => format!("{} 秒", rng.random_range(1..300)),
                    1 => format!("{}%", rng.random_range(1..100)),
                    2 => format!("{}ms", rng.random_range(5..2000)),
                    3 => format!("{} 次", rng.random_range(2..50)),
                    _ => format!("{} 个", rng.random_range(2..64)),
                };
                (t, true)
            } else {
                let mut r = self.zh_word(s);
                if r == prev {
                    r = self.zh_word(s);
                }
                prev = r;
                (self.ctx.zh.words[r as usize].to_string(), false)
            };
            if !after_comma && (prev_ascii || ascii) {
                out.push(' ');
            }
            out.push_str(&tok);
            prev_ascii = ascii;
            after_comma = false;
            if j + 1 < n && self.rng.random_bool(0.1) {
                out.push('，');
                after_comma = true;
            }
        }
        out.push('。');
        s.text = out;
    }

    fn description(&mut self) -> Sentence {
        let mut s = Sentence {
            text: String::new(),
            kw: 0,
            rare: Vec::new(),
            common: None,
            linked: false,
        };
        if self.plan.cjk {
            let n = self.rng.random_range(4..=8);
            let mut out = String::new();
            for _ in 0..n {
                let r = self.zh_word(&mut s);
                out.push_str(self.ctx.zh.words[r as usize]);
            }
            s.text = out;
            return s;
        }
        let n = self.rng.random_range(6..=14);
        let capital = self.rng.random_bool(0.6);
        let mut out = String::new();
        for j in 0..n {
            if j > 0 {
                out.push(' ');
            }
            if j > 0 && self.rng.random_bool(0.04) {
                self.number(&mut out);
                continue;
            }
            let r = self.en_word(&mut s);
            let w = self.ctx.en.word(r);
            if j == 0 && capital {
                out.push_str(&title_first(w));
            } else {
                out.push_str(w);
            }
            if j + 1 < n && j > 0 && self.rng.random_bool(0.05) {
                out.push(',');
            }
        }
        s.text = out;
        s
    }

    /// Markup for an inline link to `t`, wrapped in a short phrase.
    fn link_snippet(&mut self, t: u32) -> String {
        let target = &self.ctx.plans[t as usize];
        let roll: f64 = self.rng.random();
        let markup = if roll < 0.15 && !target.headings.is_empty() {
            let h = target.headings[self.rng.random_range(0..target.headings.len())];
            format!("[[{}#{}]]", target.id, h)
        } else if roll < 0.4 {
            let label = if target.cjk {
                target.name.clone()
            } else {
                target.name.to_lowercase()
            };
            format!("[[{}|{}]]", target.id, label)
        } else {
            format!("[[{}]]", target.id)
        };
        if self.plan.cjk {
            let phrase = ["，参见 ", "，详见 ", "，见 ", "（参考 "]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("，见 ");
            if phrase.starts_with('（') {
                format!("{phrase}{markup}）")
            } else {
                format!("{phrase}{markup}")
            }
        } else {
            let phrase = [
                " (see {})",
                ", see {}",
                " as noted in {}",
                ", details in {}",
                " per {}",
                " (cf. {})",
                ", tracked in {}",
            ]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or(", see {}");
            phrase.replace("{}", &markup)
        }
    }

    fn block_overhead(&self) -> usize {
        match self.plan.style {
            Style::Plain => 0,
            Style::Rule => 50,
            Style::Sections => self.plan.headings.iter().map(|h| h.len() + 7).sum(),
        }
    }

    fn min_sentences(&self) -> usize {
        match self.plan.style {
            Style::Plain => 1,
            Style::Rule => 3,
            Style::Sections => self.plan.headings.len() + 1,
        }
    }

    /// Appends the Markdown body (300..=3000 bytes) to `buf` and returns the
    /// sentences it is made of.
    fn body(&mut self, buf: &mut Vec<u8>) -> Vec<Sentence> {
        let base = buf.len();
        let target = self.rng.random_range(BODY_MIN..=BODY_MAX);
        buf.reserve(target + 160);
        let inline: Vec<u32> = self.plan.links[self.plan.n_related..].to_vec();
        let snippets: Vec<String> = inline.iter().map(|&t| self.link_snippet(t)).collect();
        let fixed = snippets.iter().map(String::len).sum::<usize>() + self.block_overhead() + 1;
        let min_sents = self.min_sentences();
        let mut sents: Vec<Sentence> = Vec::with_capacity(32);
        let mut total = fixed;
        loop {
            let s = self.sentence();
            let add = s.text.len() + 2;
            if sents.len() >= min_sents && total + add > target && total >= BODY_MIN {
                break;
            }
            total += add;
            sents.push(s);
        }
        // Attach inline links, preferring sentences without a link yet.
        for snip in snippets {
            let mut idx = self.rng.random_range(0..sents.len());
            for _ in 0..4 {
                if !sents[idx].linked {
                    break;
                }
                idx = self.rng.random_range(0..sents.len());
            }
            let s = &mut sents[idx];
            let punct = s.text.pop().unwrap_or('.');
            s.text.push_str(&snip);
            s.text.push(punct);
            s.linked = true;
        }
        let layout_seed: u64 = self.rng.random();
        loop {
            buf.truncate(base);
            self.layout(&sents, layout_seed, buf);
            let len = buf.len() - base;
            if len > BODY_MAX
                && sents.len() > min_sents
                && let Some(pos) = sents.iter().rposition(|s| !s.linked)
            {
                sents.remove(pos);
                continue;
            }
            if len < BODY_MIN {
                let s = self.sentence();
                sents.push(s);
                continue;
            }
            return sents;
        }
    }

    /// Lays the sentences out as Markdown blocks, appended to `out`.
    /// Deterministic for a given `seed`, so it can be redone after trimming.
    fn layout(&self, sents: &[Sentence], seed: u64, out: &mut Vec<u8>) {
        let base = out.len();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cjk = self.plan.cjk;
        let sep: &[u8] = if cjk { b"" } else { b" " };
        let wrap = !cjk && rng.random_bool(0.4);
        let block = |out: &mut Vec<u8>| {
            if out.len() > base {
                out.extend_from_slice(b"\n\n");
            }
        };
        let para = |out: &mut Vec<u8>, group: &[Sentence], prefix: &str| {
            let start = out.len();
            out.extend_from_slice(prefix.as_bytes());
            for (k, s) in group.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(sep);
                }
                out.extend_from_slice(s.text.as_bytes());
            }
            if wrap {
                wrap_bytes(&mut out[start..], 72);
            }
        };
        let m = sents.len();
        match self.plan.style {
            Style::Plain => {
                let mut start = 0;
                for k in 0..m {
                    if k + 1 == m || rng.random_bool(0.3) {
                        block(out);
                        para(out, &sents[start..=k], "");
                        start = k + 1;
                    }
                }
            }
            Style::Rule => {
                let labels: [&str; 3] = if cjk {
                    ["**规则**：", "**原因**：", "**做法**："]
                } else {
                    ["**Rule**: ", "**Why**: ", "**How to apply**: "]
                };
                let g1 = if m >= 5 && rng.random_bool(0.4) { 2 } else { 1 };
                let g2 = if m >= g1 + 3 && rng.random_bool(0.5) {
                    2
                } else {
                    1
                };
                let g1 = g1.min(m);
                let g2 = g2.min(m - g1);
                para(out, &sents[..g1], labels[0]);
                block(out);
                para(out, &sents[g1..g1 + g2], labels[1]);
                block(out);
                para(out, &sents[g1 + g2..], labels[2]);
            }
            Style::Sections => {
                let h = self.plan.headings.len();
                let intro = if m > h && rng.random_bool(0.6) { 1 } else { 0 };
                if intro > 0 {
                    para(out, &sents[..intro], "");
                }
                let rest = m - intro;
                let mut start = intro;
                for (k, heading) in self.plan.headings.iter().enumerate() {
                    let cnt = rest / h + usize::from(k < rest % h);
                    let group = &sents[start..start + cnt];
                    start += cnt;
                    block(out);
                    out.extend_from_slice(b"## ");
                    out.extend_from_slice(heading.as_bytes());
                    out.extend_from_slice(b"\n\n");
                    if group.len() > 1 && rng.random_bool(0.3) {
                        for (k, s) in group.iter().enumerate() {
                            if k > 0 {
                                out.push(b'\n');
                            }
                            out.extend_from_slice(b"- ");
                            out.extend_from_slice(s.text.as_bytes());
                        }
                    } else {
                        para(out, group, "");
                    }
                }
            }
        }
        out.push(b'\n');
    }
}

fn push_title(out: &mut String, w: &str) {
    let mut c = w.chars();
    if let Some(f) = c.next() {
        out.push(f.to_ascii_uppercase());
        out.push_str(c.as_str());
    }
}

fn title_first(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// Greedy in-place line wrap that never breaks inside `[[...]]` or
/// backticks. Only turns spaces into newlines, so the length is unchanged.
fn wrap_bytes(b: &mut [u8], width: usize) {
    let mut line = 0usize;
    let mut in_link = false;
    let mut in_code = false;
    for i in 0..b.len() {
        let c = b[i];
        if c == b'[' && b.get(i + 1) == Some(&b'[') {
            in_link = true;
        } else if c == b']' && b.get(i + 1) == Some(&b']') {
            in_link = false;
        } else if c == b'`' {
            in_code = !in_code;
        }
        if c == b' ' && !in_link && !in_code && line > 0 {
            let next = b[i + 1..]
                .iter()
                .position(|&x| x == b' ')
                .unwrap_or(b.len() - i - 1);
            if line + 1 + next > width {
                b[i] = b'\n';
                line = 0;
                continue;
            }
        }
        line = if c == b'\n' { 0 } else { line + 1 };
    }
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Query,
    Anchor,
    Mixed,
}

fn typo<R: Rng>(word: &str, rng: &mut R) -> String {
    let mut b: Vec<u8> = word.as_bytes().to_vec();
    let positions: Vec<usize> = (1..b.len())
        .filter(|&p| b[p].is_ascii_lowercase())
        .collect();
    if let Some(&p) = positions.choose(rng) {
        let orig = b[p];
        let mut c = orig;
        while c == orig {
            c = b'a' + rng.random_range(0..26u8);
        }
        b[p] = c;
    }
    String::from_utf8(b).unwrap_or_else(|_| word.to_string())
}

/// Picks 2-4 query words for note `t`; returns (words, had_typo).
fn query_words<R: Rng>(
    ctx: &Ctx,
    metas: &[NoteMeta],
    t: usize,
    rng: &mut R,
) -> (Vec<String>, bool) {
    let plan = &ctx.plans[t];
    let meta = &metas[t];
    if plan.cjk {
        let mut pool: Vec<u16> = meta.cands.iter().copied().take(6).collect();
        if pool.len() < 2 {
            for &w in &plan.name_zh {
                if !pool.contains(&w) {
                    pool.push(w);
                }
            }
        }
        pool.shuffle(rng);
        let k = rng.random_range(2..=3).min(pool.len());
        let words = pool[..k]
            .iter()
            .map(|&r| ctx.zh.words[r as usize].to_string())
            .collect();
        return (words, false);
    }
    let en = ctx.en;
    let topic: Vec<u16> = plan
        .topic_slug()
        .iter()
        .copied()
        .filter(|&r| r as usize >= en.n_function)
        .collect();
    let k = rng.random_range(2..=4usize);
    let add_common = k >= 3 && meta.common.is_some() && rng.random_bool(0.25);
    let n_dist = if add_common { k - 1 } else { k };
    let mut pool: Vec<u16> = meta.cands.iter().copied().take(5).collect();
    pool.shuffle(rng);
    pool.truncate(n_dist);
    if !topic.is_empty() && (pool.len() < n_dist || rng.random_bool(0.5)) {
        let w = topic[rng.random_range(0..topic.len())];
        if !pool.contains(&w) {
            if pool.len() >= n_dist {
                pool.pop();
            }
            pool.push(w);
        }
    }
    for &w in &topic {
        if pool.len() >= n_dist {
            break;
        }
        if !pool.contains(&w) {
            pool.push(w);
        }
    }
    if add_common
        && let Some(c) = meta.common
        && !pool.contains(&c)
    {
        pool.insert(rng.random_range(0..=pool.len()), c);
    }
    let mut words: Vec<String> = pool.iter().map(|&r| en.word(r).to_string()).collect();
    let mut typoed = false;
    if rng.random_bool(0.05) {
        let long: Vec<usize> = (0..words.len()).filter(|&i| words[i].len() >= 6).collect();
        if let Some(&i) = long.choose(rng) {
            words[i] = typo(&words[i], rng);
            typoed = true;
        }
    }
    (words, typoed)
}

fn build_queries(cfg: &GenConfig, ctx: &Ctx, metas: &[NoteMeta]) -> (String, usize) {
    let n = ctx.plans.len();
    if n == 0 || cfg.queries == 0 {
        return ("queries: []\n".to_string(), 0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ SALT_QUERY);
    let mut used: HashSet<usize> = HashSet::new();
    let mut out = String::from("queries:\n");
    let width = 4.max(cfg.queries.to_string().len());
    let has_links = ctx.plans.iter().any(|p| !p.links.is_empty());
    let mut pick = |rng: &mut ChaCha8Rng, need_links: bool| -> usize {
        let mut t = rng.random_range(0..n);
        for _ in 0..32 {
            let ok = !need_links || !ctx.plans[t].links.is_empty();
            if ok && !used.contains(&t) {
                break;
            }
            t = rng.random_range(0..n);
        }
        if need_links && ctx.plans[t].links.is_empty() {
            t = ctx
                .plans
                .iter()
                .position(|p| !p.links.is_empty())
                .unwrap_or(t);
        }
        used.insert(t);
        t
    };
    for q in 0..cfg.queries {
        let roll: f64 = rng.random();
        let mut mode = if roll < 0.6 {
            Mode::Query
        } else if roll < 0.8 {
            Mode::Anchor
        } else {
            Mode::Mixed
        };
        if !has_links {
            mode = Mode::Query;
        }
        let mut relevant: Vec<(usize, u8)> = Vec::new();
        let mut anchor = None;
        let mut words = Vec::new();
        let description;
        match mode {
            Mode::Query => {
                let t = pick(&mut rng, false);
                let (w, typoed) = query_words(ctx, metas, t, &mut rng);
                words = w;
                relevant.push((t, 3));
                let mut links = ctx.plans[t].links.clone();
                links.shuffle(&mut rng);
                relevant.extend(links.iter().take(3).map(|&l| (l as usize, 1)));
                let p = &ctx.plans[t];
                description = if p.cjk {
                    format!("查找关于「{}」的笔记", p.name)
                } else {
                    format!(
                        "Find the note on {}{}",
                        p.name.to_lowercase(),
                        if typoed { " (query has a typo)" } else { "" }
                    )
                };
            }
            Mode::Anchor => {
                let a = pick(&mut rng, true);
                anchor = Some(a);
                relevant.extend(ctx.plans[a].links.iter().map(|&l| (l as usize, 2)));
                description = format!("Starting from {}, find its linked notes", ctx.plans[a].id);
            }
            Mode::Mixed => {
                let a = pick(&mut rng, true);
                anchor = Some(a);
                let b = *ctx.plans[a].links.choose(&mut rng).unwrap_or(&0) as usize;
                let (w, _) = query_words(ctx, metas, b, &mut rng);
                words = w;
                relevant.push((b, 3));
                let mut links: Vec<u32> = ctx.plans[b]
                    .links
                    .iter()
                    .copied()
                    .filter(|&l| l as usize != a)
                    .collect();
                links.shuffle(&mut rng);
                relevant.extend(links.iter().take(2).map(|&l| (l as usize, 1)));
                description = format!(
                    "Starting from {}, find {}",
                    ctx.plans[a].id, ctx.plans[b].name
                );
            }
        }
        if q > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "  - id: g{:0width$}", q + 1);
        let _ = writeln!(out, "    description: {}", yaml_str(&description));
        let mode_str = match mode {
            Mode::Query => "query",
            Mode::Anchor => "anchor",
            Mode::Mixed => "mixed",
        };
        let _ = writeln!(out, "    mode: {mode_str}");
        if !words.is_empty() {
            let _ = writeln!(out, "    query: \"{}\"", words.join(" "));
        }
        if let Some(a) = anchor {
            let _ = writeln!(out, "    anchors: [\"{}\"]", ctx.plans[a].id);
        }
        out.push_str("    relevant:\n");
        let mut seen = HashSet::new();
        for (id, rel) in relevant {
            if seen.insert(id) {
                let _ = writeln!(
                    out,
                    "      - {{ id: {}, relevance: {rel} }}",
                    ctx.plans[id].id
                );
            }
        }
    }
    (out, cfg.queries)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use serde_yaml_ng::Value;

    fn split(text: &str) -> (&str, &str) {
        let rest = text.strip_prefix("---\n").expect("frontmatter start");
        let end = rest.find("\n---\n").expect("frontmatter end");
        let fm = &rest[..end + 1];
        let body = rest[end + 5..]
            .strip_prefix('\n')
            .expect("blank line after frontmatter");
        (fm, body)
    }

    fn inline_links(body: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = body;
        while let Some(start) = rest.find("[[") {
            let after = &rest[start + 2..];
            let end = after.find("]]").expect("closed link");
            let inner = &after[..end];
            let id = inner.split(['|', '#']).next().unwrap_or_default();
            out.push(id.to_string());
            rest = &after[end + 2..];
        }
        out
    }

    fn small() -> GenConfig {
        let mut cfg = GenConfig::new(300, 42);
        cfg.queries = 60;
        cfg
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mnemon-gen-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn read_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn deterministic_in_memory_and_on_disk() {
        let cfg = small();
        let in_memory = generate_notes(&cfg);
        let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
        let ra = generate(&cfg, &a).unwrap();
        let rb = generate(&cfg, &b).unwrap();
        assert_eq!(ra, rb);
        let ta = read_tree(&a);
        assert_eq!(ta, read_tree(&b));
        assert_eq!(ta.len(), cfg.notes + 1);
        assert_eq!(ra.notes, cfg.notes);
        assert_eq!(ra.queries, cfg.queries);
        let bytes: u64 = ta
            .iter()
            .filter(|(p, _)| p.ends_with(".md"))
            .map(|(_, c)| c.len() as u64)
            .sum();
        assert_eq!(ra.bytes, bytes);
        // The in-memory variant yields exactly the files written to disk.
        let on_disk: HashMap<&str, &[u8]> =
            ta.iter().map(|(p, c)| (p.as_str(), c.as_slice())).collect();
        for (rel, text) in &in_memory {
            assert_eq!(on_disk[format!("memory/{rel}").as_str()], text.as_bytes());
        }
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
        let other = generate_notes(&GenConfig::new(300, 43));
        assert_ne!(in_memory, other);
    }

    #[test]
    fn thread_count_does_not_change_output() {
        let cfg = small();
        let one = build_with_threads(&cfg, 1);
        let three = build_with_threads(&cfg, 3);
        assert_eq!(one.notes, three.notes);
        assert_eq!(one.queries_yaml, three.queries_yaml);
    }

    #[test]
    fn notes_are_well_formed() {
        let cfg = small();
        let notes = generate_notes(&cfg);
        assert_eq!(notes.len(), cfg.notes);
        let ids: HashSet<String> = notes
            .iter()
            .map(|(p, _)| p.strip_suffix(".md").unwrap().to_string())
            .collect();
        assert_eq!(ids.len(), notes.len(), "ids unique");
        let mut foldered = 0;
        let mut total_links = 0;
        for (path, text) in &notes {
            let id = path.strip_suffix(".md").unwrap();
            assert!(id.is_ascii(), "{id}");
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '/'),
                "{id}"
            );
            if id.contains('/') {
                foldered += 1;
            }
            let (fm, body) = split(text);
            assert!(
                (BODY_MIN..=BODY_MAX).contains(&body.len()),
                "{id}: body {} bytes",
                body.len()
            );
            let v: Value = serde_yaml_ng::from_str(fm).expect("frontmatter parses");
            assert!(v["name"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(v["description"].as_str().is_some());
            let ty = v["type"].as_str().unwrap();
            assert!(["project", "feedback", "user", "reference"].contains(&ty));
            assert!(v["created_at"].as_str().unwrap().starts_with("2025-"));
            assert!(v["updated_at"].as_str().unwrap().starts_with("2026-"));
            assert!(v["ttl_days"].is_null() || v["ttl_days"].as_u64().is_some());
            assert!(v["tags"].as_sequence().is_some_and(|t| !t.is_empty()));
            let related: Vec<String> = v["related"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect();
            let inline = inline_links(body);
            let mut all: Vec<String> = related.iter().chain(inline.iter()).cloned().collect();
            assert!(
                (LINKS_MIN..=LINKS_MAX).contains(&all.len()),
                "{id}: {} links",
                all.len()
            );
            total_links += all.len();
            for t in &all {
                assert!(ids.contains(t), "{id} links to missing {t}");
                assert_ne!(t, id, "self link");
            }
            all.sort();
            all.dedup();
            assert_eq!(
                all.len(),
                related.len() + inline.len(),
                "duplicate link in {id}"
            );
        }
        assert!(foldered > 20 && foldered < 110, "foldered {foldered}");
        let report = generate(&cfg, &temp_dir("links")).unwrap();
        assert_eq!(report.links, total_links);
        std::fs::remove_dir_all(temp_dir("links")).ok();
    }

    #[test]
    fn heading_links_point_at_real_headings() {
        let notes = generate_notes(&GenConfig::new(400, 5));
        let texts: HashMap<&str, &str> = notes
            .iter()
            .map(|(p, t)| (p.strip_suffix(".md").unwrap(), t.as_str()))
            .collect();
        let mut checked = 0;
        for (_, text) in &notes {
            let (_, body) = split(text);
            let mut rest = body;
            while let Some(start) = rest.find("[[") {
                let after = &rest[start + 2..];
                let end = after.find("]]").unwrap();
                if let Some((id, h)) = after[..end].split_once('#') {
                    let target = texts[id];
                    assert!(target.contains(&format!("\n## {h}\n")), "{id}#{h}");
                    checked += 1;
                }
                rest = &after[end + 2..];
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn queries_parse_and_reference_existing_notes() {
        let cfg = small();
        let dir = temp_dir("queries");
        generate(&cfg, &dir).unwrap();
        let ids: HashSet<String> = generate_notes(&cfg)
            .into_iter()
            .map(|(p, _)| p.strip_suffix(".md").unwrap().to_string())
            .collect();
        let text = std::fs::read_to_string(dir.join("queries.yaml")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let v: Value = serde_yaml_ng::from_str(&text).expect("queries.yaml parses");
        let qs = v["queries"].as_sequence().unwrap();
        assert_eq!(qs.len(), cfg.queries);
        let mut modes = HashMap::new();
        let mut qids = HashSet::new();
        for q in qs {
            assert!(qids.insert(q["id"].as_str().unwrap().to_string()));
            assert!(q["description"].as_str().is_some());
            let mode = q["mode"].as_str().unwrap();
            *modes.entry(mode.to_string()).or_insert(0) += 1;
            match mode {
                "query" | "mixed" => {
                    let words: Vec<&str> = q["query"].as_str().unwrap().split(' ').collect();
                    assert!((1..=4).contains(&words.len()), "{words:?}");
                }
                "anchor" => assert!(q["query"].is_null()),
                m => panic!("bad mode {m}"),
            }
            if mode != "query" {
                let anchors = q["anchors"].as_sequence().unwrap();
                assert_eq!(anchors.len(), 1);
                assert!(ids.contains(anchors[0].as_str().unwrap()));
            }
            let rel = q["relevant"].as_sequence().unwrap();
            assert!(!rel.is_empty());
            for r in rel {
                assert!(ids.contains(r["id"].as_str().unwrap()));
                assert!((1..=3).contains(&r["relevance"].as_u64().unwrap()));
            }
        }
        assert!(modes["query"] > modes["anchor"]);
        assert!(modes.contains_key("mixed"));
    }

    #[test]
    fn query_words_occur_in_target() {
        let cfg = small();
        let dir = temp_dir("qwords");
        generate(&cfg, &dir).unwrap();
        let text = std::fs::read_to_string(dir.join("queries.yaml")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let notes: HashMap<String, String> = generate_notes(&cfg)
            .into_iter()
            .map(|(p, t)| (p.strip_suffix(".md").unwrap().to_string(), t.to_lowercase()))
            .collect();
        let v: Value = serde_yaml_ng::from_str(&text).unwrap();
        let mut hits = 0;
        let mut total = 0;
        for q in v["queries"].as_sequence().unwrap() {
            let Some(query) = q["query"].as_str() else {
                continue;
            };
            let target = q["relevant"][0]["id"].as_str().unwrap();
            let note = &notes[target];
            for w in query.split(' ') {
                total += 1;
                hits += usize::from(note.contains(w));
            }
        }
        // Everything but the occasional typo must be found in the target note.
        assert!(hits * 100 >= total * 95, "{hits}/{total}");
    }

    #[test]
    fn cjk_notes_and_tiny_corpora() {
        let mut cfg = GenConfig::new(200, 9);
        cfg.cjk_share = 0.5;
        let notes = generate_notes(&cfg);
        let cjk = notes
            .iter()
            .filter(|(_, t)| {
                let name = t.lines().nth(1).unwrap_or_default();
                name.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
            })
            .count();
        assert!(cjk > 60 && cjk < 140, "cjk {cjk}");
        for n in 0..4 {
            let mut cfg = GenConfig::new(n, 1);
            cfg.queries = 5;
            let notes = generate_notes(&cfg);
            assert_eq!(notes.len(), n);
            let dir = temp_dir(&format!("tiny{n}"));
            let r = generate(&cfg, &dir).unwrap();
            let text = std::fs::read_to_string(dir.join("queries.yaml")).unwrap();
            serde_yaml_ng::from_str::<Value>(&text).unwrap();
            assert_eq!(r.notes, n);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn vocabulary_sizes() {
        let en = Vocab::build();
        let distinct: HashSet<&String> = en.words.iter().collect();
        assert_eq!(distinct.len(), VOCAB_SIZE);
        assert!(en.tech.len() > 400);
        let zh = CjkVocab::build();
        assert!(zh.words.len() >= 300, "{}", zh.words.len());
    }

    #[test]
    #[ignore = "scale probe; run with --ignored --nocapture"]
    fn prints_generation_time_size_and_top_in_degrees_at_10k_and_100k() {
        for n in [10_000usize, 100_000] {
            let t = std::time::Instant::now();
            let notes = generate_notes(&GenConfig::new(n, 1));
            let el = t.elapsed();
            let mut indeg: HashMap<String, usize> = HashMap::new();
            let mut bytes = 0;
            for (_, text) in &notes {
                bytes += text.len();
                let (fm, body) = split(text);
                let v: Value = serde_yaml_ng::from_str(fm).unwrap();
                for r in v["related"].as_sequence().unwrap() {
                    *indeg.entry(r.as_str().unwrap().to_string()).or_default() += 1;
                }
                for l in inline_links(body) {
                    *indeg.entry(l).or_default() += 1;
                }
            }
            let mut d: Vec<usize> = indeg.values().copied().collect();
            d.sort_unstable_by(|a, b| b.cmp(a));
            println!(
                "{n} notes: {el:?}, {bytes} bytes, top in-degrees {:?}",
                &d[..10]
            );
        }
    }
}
