import { useCallback, useEffect, useRef, useState } from 'react';

/**
 * Why the camera is not showing a picture, for people:
 * - `denied`: the person or the browser refused permission (NotAllowedError, SecurityError);
 * - `no-camera`: no camera, or none that fits (NotFoundError, OverconstrainedError);
 * - `unsupported`: the browser offers no camera API here (no `navigator.mediaDevices`: an insecure
 *   context, or an old or locked-down browser);
 * - `busy`: the camera exists but could not be opened, usually because another app holds it
 *   (NotReadableError);
 * - `stopped`: the camera went away while in use (unplugged, turned off by the system);
 * - `failed`: anything else.
 */
export type CameraProblem = 'denied' | 'no-camera' | 'unsupported' | 'busy' | 'stopped' | 'failed';

export type CameraState =
  | { readonly status: 'idle' }
  /** Asking for the camera (the permission prompt may be showing). */
  | { readonly status: 'starting' }
  | { readonly status: 'live'; readonly stream: MediaStream }
  /** Released while the page was hidden; restarts when it is visible again. */
  | { readonly status: 'paused' }
  | { readonly status: 'error'; readonly problem: CameraProblem; readonly detail: string };

export interface Camera {
  readonly state: CameraState;
  /** `facingMode` reported by the last camera opened (`user`, `environment`, or undefined: unknown). */
  readonly facingMode: string | undefined;
  /** Open the camera (again). */
  readonly start: () => void;
  /** Stop every track and forget the stream. */
  readonly stop: () => void;
}

/** The constraint asked first: the back camera of a phone; laptops answer with their only camera. */
const PREFERRED_VIDEO: MediaTrackConstraints = { facingMode: 'environment' };

class NoCameraApi extends Error {
  override name = 'NoCameraApi';
}

function stopStream(stream: MediaStream | null): void {
  for (const track of stream?.getTracks() ?? []) track.stop();
}

/** The rear camera if there is one, else any camera (`facingMode` is only a preference, but a
 * browser that treats it strictly answers OverconstrainedError: then ask for any camera). */
async function openCamera(): Promise<MediaStream> {
  // Absent outside secure contexts (https, localhost) and in some embedded browsers.
  const devices = (navigator as Partial<Navigator>).mediaDevices;
  if (typeof devices?.getUserMedia !== 'function') throw new NoCameraApi('navigator.mediaDevices is missing');
  try {
    return await devices.getUserMedia({ video: PREFERRED_VIDEO, audio: false });
  } catch (err) {
    if ((err as Error | undefined)?.name !== 'OverconstrainedError') throw err;
    return devices.getUserMedia({ video: true, audio: false });
  }
}

/** The problem a getUserMedia failure stands for (by DOMException name, old Chrome names included). */
export function cameraProblem(err: unknown): CameraProblem {
  switch ((err as Error | undefined)?.name) {
    case 'NotAllowedError':
    case 'PermissionDeniedError':
    case 'SecurityError':
      return 'denied';
    case 'NotFoundError':
    case 'DevicesNotFoundError':
    case 'OverconstrainedError':
    case 'ConstraintNotSatisfiedError':
      return 'no-camera';
    case 'NotReadableError':
    case 'TrackStartError':
      return 'busy';
    case 'NoCameraApi':
      return 'unsupported';
    default:
      return 'failed';
  }
}

/**
 * A camera stream with a life cycle people can trust: every track is stopped on `stop()`, on
 * unmount, and while the page is hidden (another tab, minimised, locked phone), in which case the
 * camera opens again when the page is visible. A stream that arrives after `stop()` (the person
 * closed the panel while the permission prompt was up) is stopped at once.
 */
export function useCamera(): Camera {
  const [state, setState] = useState<CameraState>({ status: 'idle' });
  const [facingMode, setFacingMode] = useState<string | undefined>(undefined);
  const stream = useRef<MediaStream | null>(null);
  /** Bumped on every open and release: a pending open that sees another value is stale. */
  const generation = useRef(0);
  /** Whether the owner wants the camera on (survives a pause while the page is hidden). */
  const wanted = useRef(false);

  const release = useCallback(() => {
    generation.current++;
    stopStream(stream.current);
    stream.current = null;
  }, []);

  const acquire = useCallback(async () => {
    release();
    const mine = generation.current;
    setState({ status: 'starting' });
    try {
      const opened = await openCamera();
      if (mine !== generation.current) {
        stopStream(opened);
        return;
      }
      stream.current = opened;
      const track = opened.getVideoTracks()[0];
      // `ended` fires when the camera goes away by itself, never after our own track.stop().
      track?.addEventListener('ended', () => {
        if (stream.current !== opened) return;
        wanted.current = false;
        release();
        setState({ status: 'error', problem: 'stopped', detail: 'The video track ended.' });
      });
      setFacingMode(track?.getSettings().facingMode || undefined);
      setState({ status: 'live', stream: opened });
    } catch (err) {
      if (mine !== generation.current) return;
      wanted.current = false;
      setState({
        status: 'error',
        problem: cameraProblem(err),
        detail: (err as Error | undefined)?.message ?? '',
      });
    }
  }, [release]);

  const start = useCallback(() => {
    wanted.current = true;
    void acquire();
  }, [acquire]);

  const stop = useCallback(() => {
    wanted.current = false;
    release();
    setState({ status: 'idle' });
  }, [release]);

  useEffect(() => {
    const onHide = () => {
      if (!wanted.current) return;
      release();
      setState({ status: 'paused' });
    };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') onHide();
      else if (wanted.current && stream.current === null) void acquire();
    };
    document.addEventListener('visibilitychange', onVisibility);
    window.addEventListener('pagehide', onHide);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('pagehide', onHide);
      wanted.current = false;
      release();
    };
  }, [acquire, release]);

  return { state, facingMode, start, stop };
}

/**
 * The video's current frame as a JPEG, at the camera's full resolution and never mirrored: the
 * photo is what the camera sees (writing reads the right way round), whatever the preview shows.
 */
export function captureFrame(video: HTMLVideoElement, quality = 0.92): Promise<Blob> {
  const width = video.videoWidth;
  const height = video.videoHeight;
  if (width === 0 || height === 0) return Promise.reject(new Error('The camera has no picture yet.'));
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  if (!context) return Promise.reject(new Error('This browser cannot draw the picture.'));
  context.drawImage(video, 0, 0, width, height);
  return new Promise((resolve, reject) => {
    canvas.toBlob(
      (blob) => (blob ? resolve(blob) : reject(new Error('This browser cannot encode the picture.'))),
      'image/jpeg',
      quality,
    );
  });
}
