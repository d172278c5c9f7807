//! The forward pass of a small BERT encoder (all-minilm-l6-v2: 6 layers, 384 wide, 12
//! heads), one sequence at a time, in plain Rust on CPU, in f32: embeddings, then per layer
//! self-attention and the feed-forward block, each followed by a residual and layer norm
//! (post-norm, as `transformers`' `BertModel`), then the sentence embedding as the model
//! card says: the mean of the last hidden states, L2-normalised. A query is a dozen
//! tokens, where a general matrix product spends most of its time packing weights it
//! then uses a dozen times. Here the weights are packed once, at load, and each block of
//! them is read in order once per call and used for every token (a block of the 384-wide
//! layers stays in the first-level cache; one of the 1,536-wide output layer, 96 KiB, in
//! the second); the inner loops are compiled for AVX2 and FMA when the CPU has them
//! (`pulp` dispatches, no `unsafe` here) and run on plain scalars otherwise (much slower:
//! `f32::mul_add` without FMA is a software routine). Wide products split their outputs over two rayon
//! tasks. Its tests compare it with `candle`'s implementation of the same model
//! (`bert.rs`, built for the tests only).

use safetensors::{Dtype, SafeTensors};

use super::BertConfig;

/// Products with more multiply-adds than this split their outputs over two tasks.
const SPLIT_WORK: usize = 1 << 20;

/// A linear layer: `y = x·Wᵀ + b`, in f32, the model's own values (8-bit weights were
/// tried: 15 % faster, but a query's vector then drifts to cosine 0.998 of the f32 one,
/// which the tools' vectors are). `W` is packed for [`Products`]: for each
/// [`BLOCK`] outputs in turn, every input's weights to those outputs side by side
/// (`[out / BLOCK][inp][BLOCK]`), so a block's weights are read in order, once per call.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

struct Norm {
    gain: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

struct Layer {
    /// Query, key and value projections stacked: `3·h` outputs.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// The model's weights laid out for [`Single::embed`] (one copy, about 86 MiB for
/// all-minilm-l6-v2), shared by every search of the process.
pub struct Single {
    words: Vec<f32>,
    positions: Vec<f32>,
    segment: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    vocab: usize,
    max_positions: usize,
}

/// The f32 tensor `name` of the weights file, checked to have `shape`, flattened.
fn tensor(st: &SafeTensors<'_>, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
    let t = st.tensor(name).map_err(|e| format!("{name}: {e}"))?;
    if t.dtype() != Dtype::F32 || t.shape() != shape {
        return Err(format!(
            "{name} is {:?} {:?}, expected 32-bit floats {shape:?}",
            t.dtype(),
            t.shape()
        ));
    }
    Ok(t.data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The linear layers `prefixes` (`<prefix>.weight`, `<prefix>.bias`: `out × inp` each)
/// stacked into one of `prefixes.len() · out` outputs, packed for [`Products`].
fn dense(st: &SafeTensors<'_>, prefixes: &[&str], inp: usize, out: usize) -> Result<Dense, String> {
    let total = out * prefixes.len();
    if !total.is_multiple_of(2 * BLOCK) {
        return Err(format!(
            "a layer of {total} outputs is not a multiple of {}",
            2 * BLOCK
        ));
    }
    let mut rows = Vec::with_capacity(total * inp);
    let mut b = Vec::with_capacity(total);
    for p in prefixes {
        rows.extend(tensor(st, &format!("{p}.weight"), &[out, inp])?);
        b.extend(tensor(st, &format!("{p}.bias"), &[out])?);
    }
    let mut w = Vec::with_capacity(rows.len());
    for first in (0..total).step_by(BLOCK) {
        for k in 0..inp {
            w.extend((first..first + BLOCK).map(|j| rows[j * inp + k]));
        }
    }
    Ok(Dense {
        w,
        b,
        inp,
        out: total,
    })
}

fn norm(st: &SafeTensors<'_>, prefix: &str, h: usize, eps: f64) -> Result<Norm, String> {
    Ok(Norm {
        gain: tensor(st, &format!("{prefix}.weight"), &[h])?,
        bias: tensor(st, &format!("{prefix}.bias"), &[h])?,
        eps: eps as f32,
    })
}

impl Single {
    /// The model of `config.json` (`cfg`) from the bytes of its `model.safetensors`
    /// (tensor names as `transformers`' `BertModel` saves them, f32): a post-norm BERT
    /// encoder with GELU (erf) and a hidden width its heads divide.
    pub fn load(weights: &[u8], cfg: &BertConfig) -> Result<Self, String> {
        if cfg.hidden_act != "gelu" || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads) {
            return Err(format!(
                "unsupported BERT config: hidden_act {:?}, hidden_size {} over {} heads",
                cfg.hidden_act, cfg.hidden_size, cfg.num_attention_heads
            ));
        }
        let st = SafeTensors::deserialize(weights).map_err(|e| e.to_string())?;
        let (h, eps) = (cfg.hidden_size, cfg.layer_norm_eps);
        let words = tensor(
            &st,
            "embeddings.word_embeddings.weight",
            &[cfg.vocab_size, h],
        )?;
        let positions = tensor(
            &st,
            "embeddings.position_embeddings.weight",
            &[cfg.max_position_embeddings, h],
        )?;
        let mut segment = tensor(&st, "embeddings.token_type_embeddings.weight", &[2, h])?;
        // token type 0's row: every text here is a single segment
        segment.truncate(h);
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let a = format!("{l}.attention");
            let qkv = [
                format!("{a}.self.query"),
                format!("{a}.self.key"),
                format!("{a}.self.value"),
            ];
            let qkv: Vec<&str> = qkv.iter().map(String::as_str).collect();
            layers.push(Layer {
                qkv: dense(&st, &qkv, h, h)?,
                attention_out: dense(&st, &[&format!("{a}.output.dense")], h, h)?,
                attention_norm: norm(&st, &format!("{a}.output.LayerNorm"), h, eps)?,
                intermediate: dense(
                    &st,
                    &[&format!("{l}.intermediate.dense")],
                    h,
                    cfg.intermediate_size,
                )?,
                output: dense(
                    &st,
                    &[&format!("{l}.output.dense")],
                    cfg.intermediate_size,
                    h,
                )?,
                output_norm: norm(&st, &format!("{l}.output.LayerNorm"), h, eps)?,
            });
        }
        Ok(Self {
            words,
            positions,
            segment,
            norm: norm(&st, "embeddings.LayerNorm", h, eps)?,
            layers,
            hidden: h,
            heads: cfg.num_attention_heads,
            vocab: cfg.vocab_size,
            max_positions: cfg.max_position_embeddings,
        })
    }

    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// The sentence embedding of one token id sequence (framed by `[CLS]` … `[SEP]`):
    /// the mean of the last hidden states, unit length. `None` for an empty sequence, one
    /// longer than the model's positions or an id outside its vocabulary. The pass runs on
    /// one of rayon's threads, handed over once: its two dozen splits are then pushed to
    /// that thread's own queue, where from any other thread each would be a hand-over of
    /// its own (and a wait on a latch).
    pub fn embed(&self, ids: &[u32]) -> Option<Vec<f32>> {
        rayon::scope(|_| self.embed_here(ids))
    }

    fn embed_here(&self, ids: &[u32]) -> Option<Vec<f32>> {
        let (n, h) = (ids.len(), self.hidden);
        if n == 0 || n > self.max_positions || ids.iter().any(|&i| i as usize >= self.vocab) {
            return None;
        }
        let mut x = vec![0f32; n * h];
        for (t, (&id, row)) in ids.iter().zip(x.chunks_exact_mut(h)).enumerate() {
            let word = &self.words[id as usize * h..][..h];
            let pos = &self.positions[t * h..][..h];
            for (((v, w), p), s) in row.iter_mut().zip(word).zip(pos).zip(&self.segment) {
                *v = w + p + s;
            }
        }
        layer_norm(&mut x, &self.norm);
        let mut qkv = Vec::new();
        let mut ctx = vec![0f32; n * h];
        let mut a = Vec::new();
        let mut inter = Vec::new();
        for l in &self.layers {
            linear(&x, n, &l.qkv, None, &mut qkv);
            attention(&qkv, n, h, self.heads, &mut ctx);
            linear(&ctx, n, &l.attention_out, None, &mut a);
            add(&mut a, &x);
            layer_norm(&mut a, &l.attention_norm);
            linear(&a, n, &l.intermediate, Some(gelu), &mut inter);
            linear(&inter, n, &l.output, None, &mut x);
            add(&mut x, &a);
            layer_norm(&mut x, &l.output_norm);
        }
        let mut mean = vec![0f32; h];
        for row in x.chunks_exact(h) {
            add(&mut mean, row);
        }
        let len = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        mean.iter_mut().for_each(|v| *v /= len);
        Some(mean)
    }
}

fn add(y: &mut [f32], x: &[f32]) {
    y.iter_mut().zip(x).for_each(|(a, b)| *a += b);
}

fn layer_norm(x: &mut [f32], n: &Norm) {
    let h = n.gain.len();
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + n.eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&n.gain).zip(&n.bias) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// GELU with the error function, as `transformers`' `"gelu"`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Multi-head self-attention over every token (one sequence has no padding): `qkv` holds
/// per token its query, key and value (each `h` wide, `heads` heads of `h / heads`).
fn attention(qkv: &[f32], n: usize, h: usize, heads: usize, ctx: &mut [f32]) {
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let mut p = vec![0f32; n];
    for head in 0..heads {
        let off = head * d;
        for i in 0..n {
            let q = &qkv[i * 3 * h + off..][..d];
            for (j, s) in p.iter_mut().enumerate() {
                let k = &qkv[j * 3 * h + h + off..][..d];
                *s = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
            }
            let max = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut total = 0.0;
            p.iter_mut().for_each(|s| {
                *s = (*s - max).exp();
                total += *s;
            });
            let out = &mut ctx[i * h + off..][..d];
            out.fill(0.0);
            for (j, s) in p.iter().enumerate() {
                let v = &qkv[j * 3 * h + 2 * h + off..][..d];
                out.iter_mut().zip(v).for_each(|(o, v)| *o += s / total * v);
            }
        }
    }
}

/// `y = act(x·Wᵀ + b)` for `n` rows of `x`; `y` is resized to `n × d.out`. Wide products
/// split their outputs in two halves, one per task; the bias and the activation are
/// applied by the task that made the outputs (GELU's error function is a fifth of a
/// query's time when it runs on one thread).
fn linear(x: &[f32], n: usize, d: &Dense, act: Option<fn(f32) -> f32>, y: &mut Vec<f32>) {
    let inp = d.inp;
    let part = |lo: usize, outs: usize| {
        let mut out = vec![0f32; n * outs];
        let w = &d.w[lo * inp..][..outs * inp];
        pulp::Arch::new().dispatch(Products {
            x,
            n,
            inp,
            w,
            out: &mut out,
        });
        for row in out.chunks_exact_mut(outs) {
            let bias = &d.b[lo..][..outs];
            match act {
                Some(f) => row.iter_mut().zip(bias).for_each(|(v, b)| *v = f(*v + b)),
                None => row.iter_mut().zip(bias).for_each(|(v, b)| *v += b),
            }
        }
        out
    };
    y.clear();
    if n * d.out * inp > SPLIT_WORK {
        let half = d.out / 2;
        let (a, b) = rayon::join(|| part(0, half), || part(half, half));
        for (ra, rb) in a.chunks_exact(half).zip(b.chunks_exact(half)) {
            y.extend_from_slice(ra);
            y.extend_from_slice(rb);
        }
    } else {
        *y = part(0, d.out);
    }
}

/// `out[i][j] = x_i · w_j` for every token `i` (`inp` wide) and output `j` of the packed
/// weights `w` ([`Dense`]), `out` row-major (`n × outs`). Blocks of [`ROWS`] tokens by two
/// vectors of outputs: each step broadcasts one input of each token and multiplies it
/// into the two vectors of that input's weights, so the sums stay in registers, need no
/// horizontal addition, and do not wait on each other; a block of weights is read in
/// order and used for every token while it is in the first-level cache.
struct Products<'a> {
    x: &'a [f32],
    n: usize,
    inp: usize,
    w: &'a [f32],
    out: &'a mut [f32],
}

/// Outputs per packed block of weights: two AVX2 vectors of f32.
const BLOCK: usize = 16;
const ROWS: usize = 4;

impl pulp::WithSimd for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let Products { x, n, inp, w, out } = self;
        let outs = out.len() / n;
        let lanes = S::F32_LANES;
        // vectors per packed row of BLOCK outputs; pairs of them are computed together
        let per = BLOCK / lanes;
        for blk in 0..outs / BLOCK {
            let wv = S::as_simd_f32s(&w[blk * inp * BLOCK..][..inp * BLOCK]).0;
            let mut sub = 0;
            while sub < per {
                let pair = usize::from(sub + 1 < per) + 1;
                let col = blk * BLOCK + sub * lanes;
                let mut i = 0;
                while i + ROWS <= n {
                    let acc: [[S::f32s; 2]; ROWS] = block(simd, x, inp, i, wv, per, sub, pair);
                    for (r, a) in acc.iter().enumerate() {
                        store::<S>(&mut out[(i + r) * outs + col..], a, pair, lanes);
                    }
                    i += ROWS;
                }
                for i in i..n {
                    let [a]: [[S::f32s; 2]; 1] = block(simd, x, inp, i, wv, per, sub, pair);
                    store::<S>(&mut out[i * outs + col..], &a, pair, lanes);
                }
                sub += pair;
            }
        }
    }
}

/// The sums of `R` tokens from `first` against `pair` (1 or 2) vectors of outputs from
/// vector `sub` of each packed row (the second sum is zero when `pair` is 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block<S: pulp::Simd, const R: usize>(
    simd: S,
    x: &[f32],
    inp: usize,
    first: usize,
    wv: &[S::f32s],
    per: usize,
    sub: usize,
    pair: usize,
) -> [[S::f32s; 2]; R] {
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; 2]; R];
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[(first + r) * inp..][..inp]);
    for k in 0..inp {
        let w0 = wv[k * per + sub];
        let w1 = if pair == 2 {
            wv[k * per + sub + 1]
        } else {
            zero
        };
        for r in 0..R {
            let xv = simd.splat_f32s(xs[r][k]);
            acc[r][0] = simd.mul_add_f32s(xv, w0, acc[r][0]);
            acc[r][1] = simd.mul_add_f32s(xv, w1, acc[r][1]);
        }
    }
    acc
}

#[inline(always)]
fn store<S: pulp::Simd>(out: &mut [f32], acc: &[S::f32s; 2], pair: usize, lanes: usize) {
    let (v, _) = S::as_mut_simd_f32s(&mut out[..pair * lanes]);
    v.copy_from_slice(&acc[..pair]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulp::Simd;

    /// Weights packed as [`dense`] packs them, from row-major `[out][inp]`.
    fn pack(rows: &[f32], inp: usize, out: usize) -> Vec<f32> {
        let mut w = Vec::new();
        for first in (0..out).step_by(BLOCK) {
            for k in 0..inp {
                w.extend((first..first + BLOCK).map(|j| rows[j * inp + k]));
            }
        }
        w
    }

    /// The products on this CPU's vectors, on plain scalars and on portable vectors of 4
    /// and 16 lanes (one vector per packed row: the unpaired path) all equal the naive
    /// sums, for every count of tokens around a block of [`ROWS`].
    #[test]
    fn the_packed_products_equal_the_naive_sums() {
        let (inp, out) = (24, 2 * BLOCK);
        let out_w = out;
        let rows: Vec<f32> = (0..inp * out).map(|i| (i as f32 * 0.37).sin()).collect();
        let w = pack(&rows, inp, out);
        for n in 1..=2 * ROWS + 1 {
            let x: Vec<f32> = (0..n * inp).map(|i| (i as f32 * 0.11).cos()).collect();
            let mut want = vec![0f32; n * out];
            for i in 0..n {
                for j in 0..out {
                    want[i * out + j] = (0..inp).map(|k| x[i * inp + k] * rows[j * inp + k]).sum();
                }
            }
            let mut got = [(); 4].map(|_| vec![0f32; n * out_w]);
            let [here, scalar, four, sixteen] = &mut got;
            let products = |out| Products {
                x: &x,
                n,
                inp,
                w: &w,
                out,
            };
            pulp::Arch::new().dispatch(products(here));
            pulp::Scalar::new().vectorize(products(scalar));
            pulp::Scalar128b.vectorize(products(four));
            pulp::Scalar512b.vectorize(products(sixteen));
            let labels = ["this CPU's vectors", "scalars", "4 lanes", "16 lanes"];
            for (got, label) in got.iter().zip(labels) {
                for (g, e) in got.iter().zip(&want) {
                    assert!(
                        (g - e).abs() < 1e-4,
                        "{n} tokens on {label}: {g} against {e}"
                    );
                }
            }
        }
    }

    /// A product wide enough to be split over two tasks gives the naive `act(x·Wᵀ + b)`
    /// in row-major order: the halves are put back together, each with its own bias.
    #[test]
    fn a_split_linear_layer_equals_the_naive_one() {
        let (n, inp, out) = (5, 256, 4 * BLOCK * 16);
        assert!(n * inp * out > SPLIT_WORK, "the product is split");
        let rows: Vec<f32> = (0..inp * out)
            .map(|i| (i as f32 * 0.013).sin() * 0.1)
            .collect();
        let b: Vec<f32> = (0..out).map(|j| j as f32 * 0.01 - 1.0).collect();
        let d = Dense {
            w: pack(&rows, inp, out),
            b: b.clone(),
            inp,
            out,
        };
        let x: Vec<f32> = (0..n * inp).map(|i| (i as f32 * 0.07).cos()).collect();
        for act in [None, Some(gelu as fn(f32) -> f32)] {
            let mut y = Vec::new();
            linear(&x, n, &d, act, &mut y);
            assert_eq!(y.len(), n * out);
            for i in 0..n {
                for j in 0..out {
                    let s: f32 = (0..inp)
                        .map(|k| x[i * inp + k] * rows[j * inp + k])
                        .sum::<f32>()
                        + b[j];
                    let want = act.map_or(s, |f| f(s));
                    let got = y[i * out + j];
                    assert!(
                        (got - want).abs() < 1e-3,
                        "token {i}, output {j}: {got} against {want}"
                    );
                }
            }
        }
    }
}
