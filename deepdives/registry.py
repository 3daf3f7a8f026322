"""The reference programs registered in the repository.

Only programs listed here can be run by the verifier: the name in a URL, a task or a command
is looked up in this table, and nothing typed into the admin is ever executed. Each entry
says which paper the program belongs to and which of its measurements make its main chart.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Series:
    label: str
    path: str  # where the y values are in run()'s result, e.g. "series.hilo.quality"


@dataclass(frozen=True)
class Chart:
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    x_path: str | None = None  # None: the index of the points
    log_x: bool = False
    log_y: bool = False


@dataclass(frozen=True)
class Program:
    name: str
    module: str
    system: str
    paper_slug: str | None
    summary_en: str
    summary_zh: str
    chart: Chart | None = None
    timeout_s: int = 120
    memory_mb: int = 2048
    # Extra import roots for programs kept outside the project (the test suite's own).
    pythonpath: tuple[str, ...] = field(default_factory=tuple)

    @property
    def command(self) -> str:
        return f"python -m {self.module}"

    def source_path(self) -> Path:
        for root in self.pythonpath:
            candidate = Path(root, *self.module.split(".")).with_suffix(".py")
            if candidate.exists():
                return candidate
        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            raise LookupError(f"{self.module} is not importable")
        return Path(spec.origin)

    def code_hash(self) -> str:
        """SHA-256 of the program's source file: a change makes a stored run stale."""
        return hashlib.sha256(self.source_path().read_bytes()).hexdigest()


PROGRAMS: dict[str, Program] = {
    p.name: p
    for p in [
        Program(
            name="hilo",
            module="deepdives.reference.hilo",
            system="HiLO",
            paper_slug="hilo",
            summary_en="Product-level degradation controller vs no and uniform degradation "
            "under a 2.38× surge.",
            summary_zh="产品级降级控制器，对比不降级和统一降级，流量冲到 2.38 倍时的表现。",
            chart=Chart(
                title="Weighted quality per interval",
                x_label="control interval (s)",
                y_label="weighted quality served in time",
                series=(
                    Series("no degradation", "series.none.quality"),
                    Series("uniform", "series.uniform.quality"),
                    Series("HiLO", "series.hilo.quality"),
                ),
            ),
        ),
        Program(
            name="coloc",
            module="deepdives.reference.coloc",
            system="CoLoc",
            paper_slug="coloc",
            summary_en="Co-access-aware tier placement vs hotness-only placement at equal "
            "fast-tier capacity.",
            summary_zh="按共同访问关系分层放置向量，对比只看热度的放置方式（快层容量相同）。",
            chart=Chart(
                title="Mean query latency by multimodal share",
                x_label="share of multimodal queries",
                y_label="mean latency (µs)",
                x_path="mix_sweep[*].mm_fraction",
                series=(
                    Series("hotness-only", "mix_sweep[*].mean_us_hotness"),
                    Series("CoLoc", "mix_sweep[*].mean_us_coloc"),
                ),
            ),
        ),
        Program(
            name="trustann",
            module="deepdives.reference.trustann",
            system="TrustANN",
            paper_slug="trustann",
            summary_en="Greedy verified quorum over replica replies vs trusting the first reply.",
            summary_zh="在副本回复中贪心凑出可验证的法定组，对比直接相信第一个回复。",
            chart=Chart(
                title="Acceptance vs consistency threshold γ",
                x_label="γ (minimum pairwise consistency)",
                y_label="rate",
                x_path="gamma_sweep[*].gamma",
                series=(
                    Series("clean queries trusted", "gamma_sweep[*].clean_trusted_rate"),
                    Series(
                        "tampered accepted (1 Byzantine)",
                        "gamma_sweep[*].minority_tampered_accepted",
                    ),
                ),
            ),
        ),
        Program(
            name="bellowskv",
            module="deepdives.reference.bellowskv",
            system="BellowsKV",
            paper_slug="bellowskv",
            summary_en="One least-squares latent for n adjacent layers vs per-layer low rank "
            "at the same cache budget.",
            summary_zh="相邻 n 层共用一份最小二乘潜向量，对比同等缓存预算下的逐层低秩。",
            chart=Chart(
                title="Attention output error vs compression",
                x_label="compression ratio (×)",
                y_label="relative attention error",
                x_path="by_budget.compression_ratio",
                series=(
                    Series("shared latent", "by_budget.shared_attention_rel_error"),
                    Series("per-layer low rank", "by_budget.per_layer_attention_rel_error"),
                ),
                log_x=True,
            ),
        ),
        Program(
            name="zipfusion",
            module="deepdives.reference.zipfusion",
            system="ZipFusion",
            paper_slug="zipfusion",
            summary_en="Exponent-coded BF16 KV blocks decoded inside the attention loop, "
            "bit-identical output.",
            summary_zh="只压缩 BF16 指数位的 KV 块，在注意力循环里解码，输出逐位一致。",
            chart=Chart(
                title="Bits per value by block size",
                x_label="tokens per block",
                y_label="bits per value",
                x_path="sweeps.by_block_size.block_tokens",
                series=(
                    Series("keys", "sweeps.by_block_size.key_bits_per_value"),
                    Series("values", "sweeps.by_block_size.value_bits_per_value"),
                ),
                log_x=True,
            ),
        ),
        Program(
            name="cosmos",
            module="deepdives.reference.cosmos",
            system="Cosmos",
            paper_slug="cosmos-llm-gateway",
            summary_en="LLM gateway with slow decisions off the streaming path: chunk latency, "
            "bounded budget overshoot, provider fallback.",
            summary_zh="把慢决策移出流式路径的大模型网关：分块延迟、有界的预算超支、跨厂商回退。",
            chart=Chart(
                title="p99 added latency per streamed chunk",
                x_label="time (s)",
                y_label="ms (log scale)",
                x_path="series.streaming.bucket_start_s",
                series=(
                    Series("off the path", "series.streaming.off_path_chunk_p99_ms"),
                    Series("inline calls", "series.streaming.inline_chunk_p99_ms"),
                ),
                log_y=True,
            ),
        ),
        Program(
            name="psr",
            module="deepdives.reference.psr",
            system="PSR",
            paper_slug="psr-moe-offloading",
            summary_en="MoE routing biased by a per-sequence logical cache: outputs independent "
            "of transfer timing and batch mates, fewer expert copies than exact routing + LRU.",
            summary_zh="按每条序列的逻辑缓存给 MoE 路由加偏置：输出不随传输时机和同批请求变化，"
            "专家拷贝比精确路由加 LRU 更少。",
            chart=Chart(
                title="Expert copies per token vs GPU expert slots",
                x_label="GPU expert slots per layer",
                y_label="expert copies per token",
                x_path="slot_sweep.slots",
                series=(
                    Series("exact routing + LRU", "slot_sweep.exact_lru_copies_per_token"),
                    Series(
                        "physical-cache-aware (timing-dependent)",
                        "slot_sweep.physical_aware_copies_per_token",
                    ),
                    Series("PSR (logical cache)", "slot_sweep.psr_copies_per_token"),
                ),
            ),
        ),
        Program(
            name="eic",
            module="deepdives.reference.eic",
            system="EIC",
            paper_slug="volcano-engine-eic",
            summary_en="A shared distributed prefix KV cache across serving instances vs "
            "local-only caching under non-sticky routing.",
            summary_zh="多个推理实例共享的分布式前缀 KV 缓存，对比非粘性路由下只用本地缓存。",
            chart=Chart(
                title="History recomputed vs number of instances (non-sticky routing)",
                x_label="inference instances",
                y_label="share of history tokens recomputed",
                x_path="instance_sweep.instances",
                series=(
                    Series("local cache only", "instance_sweep.local_only_history_recomputed"),
                    Series(
                        "local + shared EIC", "instance_sweep.local_plus_eic_history_recomputed"
                    ),
                    Series(
                        "local only, sticky routing",
                        "instance_sweep.local_only_sticky_history_recomputed",
                    ),
                ),
                log_x=True,
            ),
        ),
        Program(
            name="ling",
            module="deepdives.reference.ling",
            system="Ling-3.0-flash on DGX Spark",
            paper_slug="ling-flash-dgx-spark",
            summary_en="A bandwidth model of faster expert kernels, an 8-bit output projection "
            "and multi-token-prediction speculation for MoE decoding.",
            summary_zh="混合专家解码的带宽模型：更快的专家算子、8 位输出投影"
            "和多 token 预测投机解码。",
            chart=Chart(
                title="MTP speculation on an MoE: decode rate vs draft length",
                x_label="draft tokens d",
                y_label="tokens/s",
                x_path="mtp_sweep.d",
                series=(
                    Series("α = 0.6", "mtp_sweep.alpha60"),
                    Series("α = 0.7", "mtp_sweep.alpha70"),
                    Series("α = 0.8", "mtp_sweep.alpha80"),
                    Series("α = 0.9", "mtp_sweep.alpha90"),
                    Series("α = 0.8, independent routing", "mtp_sweep.alpha80_independent_routing"),
                ),
            ),
        ),
        Program(
            name="minerva",
            module="deepdives.reference.minerva",
            system="Minerva",
            paper_slug="minerva",
            summary_en="Peer-relative anomaly detection and topology-based alert grouping vs "
            "fixed thresholds.",
            summary_zh="与同类设备对比的异常检测加按拓扑合并告警，对比固定阈值。",
            chart=Chart(
                title="Catching a slow GPU: peer z-score vs fixed threshold",
                x_label="slowdown of one rank (%)",
                y_label="detection rate",
                x_path="gray_sweep.slowdown_pct",
                series=(
                    Series("peer z-score, 3 windows", "gray_sweep.peer_detect_rate"),
                    Series("absolute +30% threshold", "gray_sweep.threshold_detect_rate"),
                ),
            ),
        ),
        Program(
            name="rounding",
            module="deepdives.reference.rounding",
            system="Rounding-location alignment",
            paper_slug="rounding-location-alignment",
            summary_en="Trainer and inference engine rounding RoPE, SwiGLU and residual RMSNorm "
            "to BF16 at the same points vs at different points.",
            summary_zh="训练端和推理端在相同或不同位置把 RoPE、SwiGLU 和残差 RMSNorm 舍入到 BF16。",
            chart=Chart(
                title="Trainer–inference log-prob mismatch by depth",
                x_label="layers",
                y_label="mean |Δ log π| per token (nats)",
                x_path="depth.depth",
                series=(
                    Series("misaligned BF16", "depth.misaligned_bf16_mean_abs_delta"),
                    Series("misaligned FP16", "depth.misaligned_fp16_mean_abs_delta"),
                    Series(
                        "aligned BF16, split-K GEMM", "depth.aligned_bf16_split_k_mean_abs_delta"
                    ),
                    Series("aligned BF16", "depth.aligned_bf16_mean_abs_delta"),
                ),
            ),
        ),
        Program(
            name="biasfold",
            module="deepdives.reference.biasfold",
            system="Folding attention biases into keys",
            paper_slug="folding-attention-biases",
            summary_en="Exact extra-dimension fold, least-squares direction fold and fold + "
            "value refit of Attention Matching biases, on an unmodified attention kernel.",
            summary_zh="把 Attention Matching 的偏置折进键向量：精确加维、"
            "最小二乘方向折叠、折叠后重拟合值。",
            chart=Chart(
                title="Held-out attention error vs shared query component",
                x_label="query mean / noise norm",
                y_label="relative output error (log scale)",
                x_path="by_mean_strength.mean_strength",
                series=(
                    Series("AM with bias", "by_mean_strength.am_biased"),
                    Series("fold + refit", "by_mean_strength.fold_refit"),
                    Series("fold", "by_mean_strength.fold"),
                    Series("drop bias", "by_mean_strength.drop_bias"),
                ),
                log_y=True,
            ),
        ),
        Program(
            name="c2kv",
            module="deepdives.reference.c2kv",
            system="C2KV",
            paper_slug="c2kv",
            summary_en="Documents compressed independently into a few learned summary tokens "
            "whose KV is kept, then composed at serve time with no document prefill.",
            summary_zh="每篇文档独立压成几个可学习的摘要 token，只保留它们的 KV，"
            "用时直接拼接，不再预填充文档。",
            chart=Chart(
                title="Recall accuracy vs compression (4 documents per request)",
                x_label="compression ratio n/m",
                y_label="accuracy",
                x_path="by_slots.compression_ratio",
                series=(
                    Series("C2KV (learned compression tokens)", "by_slots.c2kv"),
                    Series("full context", "by_slots.full_context"),
                    Series("mean-pooled chunks", "by_slots.mean_pool"),
                    Series("m random tokens kept", "by_slots.keep_tokens"),
                ),
                log_x=True,
            ),
        ),
        Program(
            name="gaterq",
            module="deepdives.reference.gaterq",
            system="GateRQ",
            paper_slug="gaterq",
            summary_en="Layered 1-bit residual codes with gate-ranked precision per lookup vs "
            "uniform precision at the same bits.",
            summary_zh="多级 1 比特残差码，按门控排序为每次查表分配精度，对比同等比特的统一精度。",
            chart=Chart(
                title="Memory output error vs bits read per lookup",
                x_label="mean levels read per lookup (1.25 bits/dim each)",
                y_label="relative output error (log scale)",
                x_path="sweep.mean_levels",
                series=(
                    Series("uniform precision", "sweep.uniform"),
                    Series("GateRQ (gate-ranked)", "sweep.gate_ranked"),
                    Series("most-read rows", "sweep.frequency_rows"),
                    Series("random rows", "sweep.random_rows"),
                    Series("oracle (true gate)", "sweep.oracle"),
                ),
                log_y=True,
            ),
        ),
        Program(
            name="kvstream",
            module="deepdives.reference.kvstream",
            system="KVStream",
            paper_slug="kvstream",
            summary_en="KV blocks written to local NVMe and the parallel file system, read from "
            "both through a shared batch queue, vs either store alone.",
            summary_zh="每块 KV 同时写本地 NVMe 和并行文件系统，读取时两路共用一个批次队列，"
            "对比只读其中一路。",
            chart=Chart(
                title="Read time of a 32K-token prefix vs PFS contention",
                x_label="share of time the PFS is contended",
                y_label="mean read time (ms)",
                x_path="by_contention.contended_fraction",
                series=(
                    Series("NVMe only", "by_contention.nvme_only_ms"),
                    Series("PFS only", "by_contention.pfs_only_ms"),
                    Series("static split", "by_contention.static_split_ms"),
                    Series("KVStream", "by_contention.kvstream_ms"),
                    Series("ideal", "by_contention.ideal_ms"),
                ),
            ),
        ),
        Program(
            name="wakman",
            module="deepdives.reference.wakman",
            system="WAKMan",
            paper_slug="wakman",
            summary_en="LRU and S3-FIFO simulators replaying the last window every epoch and "
            "switching to the winner, vs either policy fixed and the per-epoch oracle.",
            summary_zh="每个时段把刚过去的流量在 LRU 和 S3-FIFO 两套模拟缓存上重放，"
            "下一段用赢家，对比固定策略和逐段最优。",
            chart=Chart(
                title="Hit ratio per 15-minute epoch (phases B, A, B, A of 6 epochs)",
                x_label="epoch",
                y_label="prefix hit ratio",
                x_path="main.per_epoch.epoch",
                series=(
                    Series("LRU", "main.per_epoch.LRU"),
                    Series("S3-FIFO", "main.per_epoch.S3FIFO"),
                    Series("WAKMan", "main.per_epoch.WAKMan"),
                    Series("per-epoch oracle", "main.per_epoch.oracle"),
                ),
            ),
        ),
    ]
}


def get_program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise LookupError(f"no registered reference program named {name!r}") from None


def resolve(data: object, path: str) -> list:
    """Values at ``path`` in a run's result: dotted keys, ``[*]`` maps over a list."""
    values: list = [data]
    mapped = False
    for part in path.split("."):
        key = part.removesuffix("[*]")
        values = [v[key] for v in values]
        if part.endswith("[*]"):
            values = [item for v in values for item in v]
            mapped = True
    return values if mapped else list(values[0])
