#!/usr/bin/env bash
# Build the playground's image where no container registry can be reached, run it, and check
# it through its nginx as a class would use it:
#   1. the base image debian:bookworm-slim made from Debian's packages (debootstrap, minbase)
#      and imported into podman, unless podman already has one;
#   2. the project's image in Docker format (`--format docker`: the OCI default drops the
#      Dockerfile's HEALTHCHECK), checked to carry that health check;
#   3. one container with the Dockerfile's own command: healthy by its own check, and its
#      worker count taken from its CPU quota (--cpus 1: one worker, not the host's CPUs - 1);
#   4. one container serving 2 replicas behind the image's nginx on 127.0.0.1:PORT, and the
#      browser tests of tests/e2e/test_served_image.py against it: sessions spread and stay on
#      a replica, a page and a download, a live GAN frame.
# Every container and the temporary root are removed at the end, also on failure.
#   deploy/build_image.sh [--torch-wheel F] [--ca-bundle F] [--port PORT] [--keep-base]
#     --torch-wheel F  the CPU torch wheel, for a build that cannot reach PyTorch's wheel
#                      index (mounted into the build, Dockerfile TORCH_WHEEL)
#     --ca-bundle F  the certificates pip trusts in the build, behind a proxy that re-signs
#                    TLS (mounted into the build, Dockerfile CA_BUNDLE)
# Needs root (or rootless podman), podman, debootstrap, Debian's chromium and the dev extras.
# Where the kernel refuses podman's default runtime or limits (a VM without CAP_SYS_RESOURCE,
# cgroups v1), PODMAN_OPTS and RUN_OPTS are added to every podman call and every build/run:
#   PODMAN_OPTS="--runtime runc" RUN_OPTS="--ulimit nofile=20000:20000 --ulimit nproc=4096:4096"
set -euo pipefail
cd "$(dirname "$0")/.."

WHEEL="" CA="" PORT=18080 KEEP_BASE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --torch-wheel) WHEEL=$(realpath "$2"); shift 2 ;;
    --ca-bundle) CA=$(realpath "$2"); shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --keep-base) KEEP_BASE=1; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done

read -r -a PODMAN <<<"podman ${PODMAN_OPTS:-}"
read -r -a RUN_OPTS <<<"${RUN_OPTS:-}"
BASE=docker.io/library/debian:bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOTFS=""
cleanup() {
  for name in dlplay-check-one dlplay-check-class; do
    "${PODMAN[@]}" rm -f -i "$name" >/dev/null 2>&1 || true
  done
  if [ -n "$ROOTFS" ]; then rm -rf "$ROOTFS"; fi
}
trap cleanup EXIT
step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

step "1. base image $BASE"
if "${PODMAN[@]}" image exists "$BASE" && [ "$KEEP_BASE" = 1 ]; then
  echo "kept: $("${PODMAN[@]}" image inspect "$BASE" --format '{{.Id}} {{.Created}}')"
else
  ROOTFS=$(mktemp -d /var/tmp/dlplay-rootfs-XXXXXX)
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 \
    || { tail -20 "$ROOTFS.log"; exit 1; }
  rm -f "$ROOTFS.log"
  rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
  tar -C "$ROOTFS" -c . | "${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  echo "made from $MIRROR: $("${PODMAN[@]}" image inspect "$BASE" --format '{{.Size}}') bytes"
fi

step "2. the project's image (Docker format)"
build=("${PODMAN[@]}" build --format docker --pull=never -t dlplay:latest "${RUN_OPTS[@]}")
if [ -n "$WHEEL" ]; then
  build+=(-v "$(dirname "$WHEEL"):/wheels:ro,z" --build-arg "TORCH_WHEEL=/wheels/$(basename "$WHEEL")")
fi
if [ -n "$CA" ]; then
  build+=(-v "$CA:/etc/dlplay-ca.pem:ro,z" --build-arg CA_BUNDLE=/etc/dlplay-ca.pem)
fi
"${build[@]}" . >/var/tmp/dlplay-build.log 2>&1 || { tail -30 /var/tmp/dlplay-build.log; exit 1; }
health=$("${PODMAN[@]}" image inspect dlplay:latest --format '{{json .Config.Healthcheck}}')
echo "size $("${PODMAN[@]}" image inspect dlplay:latest --format '{{.Size}}') bytes; HEALTHCHECK: $health"
case "$health" in *healthcheck.py*) ;; *) echo "the image lost its HEALTHCHECK" >&2; exit 1 ;; esac

step "3. the Dockerfile's command, one CPU"
"${PODMAN[@]}" run -d --name dlplay-check-one --init --cpus 1 "${RUN_OPTS[@]}" dlplay:latest >/dev/null
for _ in $(seq 60); do
  "${PODMAN[@]}" healthcheck run dlplay-check-one >/dev/null 2>&1 && break
  sleep 3
done
"${PODMAN[@]}" healthcheck run dlplay-check-one \
  || { "${PODMAN[@]}" logs dlplay-check-one 2>&1 | tail -20; echo "never healthy" >&2; exit 1; }
echo "healthy by the image's own check"
usable=$("${PODMAN[@]}" exec dlplay-check-one python3 -c \
  "from engine.cpus import usable_cpus; print(usable_cpus())")
echo "host CPUs $(nproc); CPUs the container counts (its quota): $usable"
[ "$usable" = 1 ] || { echo "a one-CPU container counts $usable CPUs" >&2; exit 1; }
"${PODMAN[@]}" rm -f dlplay-check-one >/dev/null

step "4. two replicas behind the image's nginx on 127.0.0.1:$PORT"
"${PODMAN[@]}" run -d --name dlplay-check-class --init -p "127.0.0.1:$PORT:8080" "${RUN_OPTS[@]}" \
  dlplay:latest \
  python3 -m deploy.cli serve --address 0.0.0.0 --port 8080 --replicas 2 >/dev/null
for _ in $(seq 90); do
  curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 2
done
echo "healthz: $(curl -fsS "http://127.0.0.1:$PORT/healthz")"
DLPLAY_IMAGE_URL="http://127.0.0.1:$PORT" python3 -m pytest tests/e2e/test_served_image.py \
  -q -p no:cacheprovider -o addopts="" -rA
tracebacks=$("${PODMAN[@]}" logs dlplay-check-class 2>&1 | grep -c Traceback || true)
echo "tracebacks in the container's log: $tracebacks"
[ "$tracebacks" = 0 ]
