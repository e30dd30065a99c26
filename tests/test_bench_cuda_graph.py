"""benchmarks.cuda_graph: k replayed steps of a captured training step equal k eager steps.
The capture tests need CUDA; on a CPU-only machine they are skipped (scripts/device_check.sh
runs them on a lent GPU)."""
import pytest
import torch

from benchmarks.cuda_graph import GraphedStep, classifier_step_fn, mlp_step, use_cuda_graph

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="CUDA graphs need a CUDA device; none on this machine "
                                       "(run scripts/device_check.sh on a GPU)")


def test_use_cuda_graph_only_on_cuda():
    assert not use_cuda_graph("cpu")
    assert use_cuda_graph("cuda") == torch.cuda.is_available()


def test_graphed_step_rejects_cpu_inputs():
    with pytest.raises(ValueError, match="CUDA tensors"):
        GraphedStep(lambda x: {"x": x}, {"x": torch.zeros(3)})


def _batches(k, batch=256, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(k):
        x = torch.randn(batch, 2, generator=g)
        out.append((x.cuda(), (x[:, 0] * x[:, 1] > 0).float().cuda()))
    return out


@needs_cuda
@pytest.mark.parametrize("warmup", [1, 3])
def test_graphed_steps_equal_eager_steps(warmup):
    k = 12
    batches = _batches(k)
    m_eager, o_eager, *_ = mlp_step("cuda", 2, 128, seed=0, capturable=True)
    m_graph, o_graph, *_ = mlp_step("cuda", 2, 128, seed=0, capturable=True)
    eager = classifier_step_fn(m_eager, o_eager)
    graphed = GraphedStep(classifier_step_fn(m_graph, o_graph),
                          {"x": batches[0][0], "y": batches[0][1]}, warmup=warmup)
    losses_e, losses_g = [], []
    for x, y in batches:                       # different data each step: inputs are copied
        losses_e.append(float(eager(x=x, y=y)["loss"]))
        losses_g.append(float(graphed(x=x, y=y)["loss"]))
    assert graphed.graph is not None and graphed.calls == k
    assert losses_e == pytest.approx(losses_g, rel=1e-5, abs=1e-6)
    assert losses_e[-1] != pytest.approx(losses_e[0], abs=1e-4)    # it did train
    for pe, pg in zip(m_eager.parameters(), m_graph.parameters()):
        torch.testing.assert_close(pg, pe, rtol=1e-5, atol=1e-6)


@needs_cuda
def test_graphed_step_rejects_new_shape():
    m, o, *_ = mlp_step("cuda", 1, 16, capturable=True)
    x, y = _batches(1)[0]
    step = GraphedStep(classifier_step_fn(m, o), {"x": x, "y": y}, warmup=1)
    step(x=x, y=y)
    with pytest.raises(ValueError, match="shape"):
        step(x=x[:10], y=y[:10])
